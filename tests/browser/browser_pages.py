"""Pages of the browser tests: fresh contexts, screenshots as test artefacts, script errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, expect

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "out" / "browser"
DESKTOP = {"width": 1200, "height": 860}
WAIT_MS = 15_000  # what a page's action and an expect() wait
# expect() waits 5 s unless told; an action and an assertion wait alike here. (Two of the first
# four runs after Chromium was installed failed test_an_open_seat_is_handed_to_a_bot: the click
# came before the table's stream started, whose snapshot then skipped the deal's line in the
# log; the table now starts its stream at its first read's cursor, see
# test_a_change_before_the_stream_starts_is_told_in_the_log.)
expect.set_options(timeout=WAIT_MS)


class Pages:
    """Pages of fresh browser contexts (one per player: nothing shared), each checked at the
    end for uncaught script errors, and screenshotted when its test failed."""

    def __init__(self, browser: Browser, base: str, artefacts: Path, test_name: str) -> None:
        self.browser = browser
        self.base = base
        self.artefacts = artefacts
        self.test_name = test_name
        self.opened: list[tuple[Any, Page, list[str]]] = []

    def new(self, path: str = "/", pace: int = 0, **context: Any) -> Page:
        """A page of a fresh context; ``pace``: how long the table shows each of the other
        seats' moves (ms; the tests play at once unless they test the pace)."""
        ctx = self.browser.new_context(base_url=self.base, viewport=context.pop("viewport", DESKTOP), **context)
        ctx.add_init_script(f"try {{ localStorage.setItem('canasta.pace', '{int(pace)}'); }} catch (e) {{}}")
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_default_timeout(WAIT_MS)
        page.goto(path)
        self.opened.append((ctx, page, errors))
        return page

    def shot(self, page: Page, name: str, full_page: bool = True) -> Path:
        path = self.artefacts / f"{name}.png"
        page.mouse.move(0, 0)  # no hover effect in the picture
        page.screenshot(path=str(path), full_page=full_page)
        return path

    def close(self, failed: bool) -> None:
        errors = []
        for i, (ctx, page, page_errors) in enumerate(self.opened):
            if failed:
                try:
                    self.shot(page, f"FAILED-{self.test_name}-{i}")
                except Exception:  # noqa: BLE001 - a failed screenshot must not hide the failure
                    pass
            errors += page_errors
            ctx.close()
        assert not errors, f"uncaught script errors in the page: {errors}"


def copy_readme_screenshot(source: Path) -> None:
    """``CANASTA_README_SCREENSHOT=docs/table.png`` (``make readme-screenshot``): keep this one."""
    target = os.environ.get("CANASTA_README_SCREENSHOT")
    if target:
        shutil.copyfile(source, ROOT / target)
