"""`canasta serve` without REDIS_URL: it answers, and SIGTERM leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import psutil
import requests
from api_servers import free_port, wait_healthy


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _valkey_on(port: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "valkey-server" in cmd and f":{port}" in cmd:
            found.append(p)
    return found


def test_serve_starts_and_stops_cleanly() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["CANASTA_KEY_PREFIX"] = "serve-test"
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(port), "--workers", "1",
                             "--threads", "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, proc, timeout=60)
        assert requests.get(base + "/readyz", timeout=5).json() == {"status": "ready"}
        deadline = time.monotonic() + 10
        while not any("curl" in line for line in output) and time.monotonic() < deadline:
            time.sleep(0.05)
        text = "".join(output)
        redis_port = int(re.search(r"redis://127\.0\.0\.1:(\d+)", text).group(1))
        assert "curl -s -X POST " + base + "/games" in text
        assert f"table: {base}/" in text
        assert requests.get(base + "/", timeout=5).headers["Content-Type"].startswith("text/html")
        children = _descendants(proc.pid)
        valkeys = _valkey_on(redis_port)
        assert len(valkeys) == 1, "the embedded Valkey is running"
        assert any("gunicorn" in " ".join(c.cmdline()) for c in children)
        r = requests.post(base + "/games", json={"preset": "classic", "seats": [{"name": "a"}, None, None, None]}, timeout=5)
        assert r.status_code == 201
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, "".join(output)
    _, alive = psutil.wait_procs(children + valkeys, timeout=10)
    assert not alive, f"left behind: {alive}"
    assert not _valkey_on(redis_port)


def test_serve_help() -> None:
    out = subprocess.run([sys.executable, "-m", "cli.main", "serve", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--workers" in out.stdout and "--threads" in out.stdout
