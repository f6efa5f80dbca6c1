"""A stop flag set from a signal handler never hangs the process that waits on it
(``service.procstat.StopFlag``). ``threading.Event`` does: its ``set()`` in a handler can wait for
ever on the lock its own thread holds inside ``wait()``. That once left a ``canasta serve``
running after SIGTERM, and this test, with an ``Event`` in the child, hangs within a few
thousand signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

SIGNALS = 20_000

CHILD = """
import signal
from service.procstat import StopFlag
flag = StopFlag()
finish = False
def woken(signum, frame):
    flag.set()
def finished(signum, frame):
    global finish
    finish = True
signal.signal(signal.SIGUSR1, woken)
signal.signal(signal.SIGUSR2, finished)
print("ready", flush=True)
while not finish:
    flag.wait(0.0001)  # short waits: a handler often lands inside one
    flag.clear()
signal.signal(signal.SIGUSR2, signal.SIG_IGN)
print("done", flush=True)
"""


def test_a_signal_during_a_wait_never_hangs_the_waiter() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=root, text=True, stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": root})
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for _ in range(SIGNALS):
            child.send_signal(signal.SIGUSR1)
            time.sleep(0.00005)  # one at a time: signals that arrive together are merged
        deadline = time.monotonic() + 10
        while child.poll() is None and time.monotonic() < deadline:
            child.send_signal(signal.SIGUSR2)
            time.sleep(0.01)
        assert child.poll() == 0, "the child hangs in its signal handler"
        assert child.stdout.read().strip() == "done"
    finally:
        child.kill()
