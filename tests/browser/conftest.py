"""Fixtures of the browser tests: a real API server (granian) and a real bot worker on a real
Redis, and Debian's Chromium driven by Playwright for Python.

The tests are marked ``browser`` (module ``pytestmark``): plain ``make test`` leaves them out,
``make test-browser`` runs them. Chromium comes from Debian (``apt-get install chromium
chromium-headless-shell``: ``playwright install`` cannot download a browser here); without it
the tests fail and say how to install it. Screenshots of key states go to ``out/browser/``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_pages import ARTEFACTS, ROOT, Pages
from playwright.sync_api import Browser, Playwright, sync_playwright

from client import Client
from tests.conftest_redis import key_prefix, redis_url  # noqa: F401
from tests.web.api_servers import api_server

CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/bin/chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]
# Streams end this soon, so that every test also sees the table resume with Last-Event-ID.
SSE_MAX_SECONDS = "4"


def chromium_path() -> str:
    path = os.environ.get("CANASTA_CHROMIUM") or next((p for p in CHROMIUM_CANDIDATES if Path(p).exists()), None)
    if path is None:
        pytest.fail("No Chromium: install Debian's with `apt-get install -y --no-install-recommends chromium "
                    "chromium-headless-shell` (.ci/run does), or set CANASTA_CHROMIUM to its path.", pytrace=False)
    return path


@pytest.fixture(scope="session")
def server(redis_url: str, key_prefix: str) -> Iterator[str]:  # noqa: F811
    """The API on a free loopback port, and a bot worker for its bot seats."""
    env = {"CANASTA_SSE_MAX_SECONDS": SSE_MAX_SECONDS, "CANASTA_SSE_PING_SECONDS": "1"}
    with api_server(redis_url, key_prefix, threads=4, extra_env=env) as base:
        worker_env = {**os.environ, "REDIS_URL": redis_url, "CANASTA_KEY_PREFIX": key_prefix,
                      "CANASTA_BOT_BUDGET_MS": "5"}
        worker = subprocess.Popen([sys.executable, "-m", "cli.main", "worker", "--redis-url", redis_url],
                                  env=worker_env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=sys.stderr)
        try:
            yield base
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(15)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(5)


@pytest.fixture(scope="session")
def api(server: str) -> Iterator[Client]:
    """Set-up and checks over HTTP (the moves under test are the browser's)."""
    client = Client(server)
    yield client
    client.http.close()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def artefacts() -> Path:
    """out/browser/, emptied of the last run's screenshots."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTEFACTS.glob("*.png"):
        old.unlink()
    return ARTEFACTS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[FAILED] = report.failed


FAILED = pytest.StashKey[bool]()


@pytest.fixture
def pages(browser: Browser, server: str, artefacts: Path, request: pytest.FixtureRequest) -> Iterator[Pages]:
    _used["pages"] = True
    p = Pages(browser, server, artefacts, request.node.name)
    yield p
    p.close(request.node.stash.get(FAILED, True))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _used["pages"]:
        terminalreporter.write_line(f"browser test screenshots: {ARTEFACTS.relative_to(ROOT)}/")


_used = {"pages": False}
