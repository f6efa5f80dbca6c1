"""A serving process keeps the garbage collector's full passes rare (``procstat.settle_collector``):
with thousands of open streams a full pass held the event loop for 100-300 ms, a pause in
every listener's delivery. Checked in a process of its own: the setting is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys

from service.procstat import FULL_COLLECTION_EVERY

PROBE = """
import gc, json, sys
from web.asgi import create_asgi_app
before = gc.get_threshold()
create_asgi_app({"redis_url": sys.argv[1], "key_prefix": sys.argv[2]})
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def test_the_asgi_app_freezes_what_start_made_and_makes_full_collections_rare(redis_url: str, key_prefix: str) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, redis_url, key_prefix], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    young, middle, full = seen["after"]
    assert (young, middle) == tuple(seen["before"][:2]), "the young generations keep CPython's thresholds"
    assert full == FULL_COLLECTION_EVERY > seen["before"][2]
    assert seen["frozen"] > 10_000, "the modules, classes and functions of start are frozen"


KILLED_PARENT = """
import subprocess, sys
from service.procstat import die_with_parent
child = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent)
print(child.pid, flush=True)
sys.stdin.read()
"""


def test_a_child_started_with_die_with_parent_dies_when_its_parent_is_killed() -> None:
    """What keeps a killed test run from leaving the local cluster's nodes behind."""
    import os
    import signal
    import time

    parent = subprocess.Popen([sys.executable, "-c", KILLED_PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.kill(child, 0)  # alive
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        with open(f"/proc/{child}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # dead, not yet reaped by init
                return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the child outlived its killed parent")


def test_a_granian_worker_stops_when_its_main_process_is_killed(redis_url: str, key_prefix: str) -> None:
    """A worker whose main process died (kill -9) gets SIGTERM and stops (a worker once ran on
    for good after its main was killed)."""
    import os
    import time

    import psutil
    from api_servers import free_port

    from web.serve import api_command, api_env, wait_healthy

    port = free_port()
    env = api_env({**os.environ, "REDIS_URL": redis_url, "CANASTA_KEY_PREFIX": key_prefix}, 1)
    main = subprocess.Popen(api_command("127.0.0.1", port, 1), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert wait_healthy(f"http://127.0.0.1:{port}", main, 60)
        workers = psutil.Process(main.pid).children()
        assert workers
        main.kill()
        main.wait(10)
        started = time.monotonic()
        _, alive = psutil.wait_procs(workers, timeout=15)
        assert not alive, f"workers left running {time.monotonic() - started:.1f} s after their main was killed"
    finally:
        for p in psutil.Process().children(recursive=True):
            if "granian" in " ".join(p.cmdline()):
                p.kill()
