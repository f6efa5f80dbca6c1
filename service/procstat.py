"""CPU time and load of local processes, from Linux ``/proc``: what the benchmarks report
beside their rates, so that runs on a busy machine can still be compared; and the settings
of a serving process (open files, the garbage collector)."""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import signal
import time

PR_SET_PDEATHSIG = 1  # linux/prctl.h
FULL_COLLECTION_EVERY = 1_000  # middle-generation collections between two full ones (CPython: 10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The direct children of a process."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children(p))
    return out


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages, as /proc/loadavg prints them."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def raise_open_files_limit() -> int:
    """The soft limit of open files raised to the hard one (5 000 sockets need more than
    the usual 1 024); returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            pass
    return soft


def settle_collector() -> None:
    """Keep the garbage collector's full passes out of a serving process's event loop.

    A full collection walks every tracked object of the process while holding the
    interpreter: in an API process with 2 500 open streams it took 100-200 ms of CPU
    (200-300 ms of wall time), one pause in the delivery to every listener of the process
    (docs/benchmarks/api.md, seventh session). What the imports and the app made at
    start (modules, classes, functions: half the objects) is frozen, never walked again,
    and a full pass comes a hundred times less often; the young generations, where a
    request's garbage dies, are collected as before.
    """
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """A ``preexec_fn``: the child gets ``sig`` (SIGKILL) when the thread that started it ends,
    the whole process included, so that a test run or a benchmark killed with SIGKILL leaves
    no server behind (Linux ``prctl(PR_SET_PDEATHSIG)``; elsewhere nothing happens). Start such
    children from a thread that outlives them: the main thread."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):  # not Linux
        pass


STOP_POLL_SECONDS = 0.05  # how soon a wait on a StopFlag sees it set


class StopFlag:
    """Set from a signal handler, seen by the main thread's waits: what ``threading.Event``
    must not be used for. ``Event.set()`` takes the lock that ``Event.wait()`` holds for a
    moment around each wait, and a handler runs on the main thread between two bytecodes,
    so a signal arriving in that moment makes ``set()`` wait for ever on its own thread's
    lock (seen: a ``canasta serve`` that never stopped after SIGTERM; reproduced by 20 000
    signals into a loop of short ``Event.wait`` calls). Here ``set()`` is one store, and a
    wait sleeps in short steps (a signal cuts a step short, PEP 475 resumes it)."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        """Whether the flag is set, once it is or ``timeout`` seconds have passed."""
        deadline = time.monotonic() + timeout
        while not self._set:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, STOP_POLL_SECONDS))
        return self._set
