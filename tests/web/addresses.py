"""Clients that a server on 127.0.0.1 tells apart by their source address.

Every address of 127.0.0.0/8 reaches a server bound to 127.0.0.1, and the server sees the
address the connection came from: a hostile client and its victim in one test are
``client_from(base, "127.0.0.2")`` and ``client_from(base, "127.0.0.3")``. Only loopback
addresses are taken (these tests never reach another machine)."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import requests

from client import NO_RETRY, Client
from client import session_from as _session_from


def _loopback(address: str) -> str:
    if not ipaddress.ip_address(address).is_loopback:
        raise ValueError(f"{address} is not a loopback address")
    return address


def session_from(address: str) -> requests.Session:
    """A ``requests.Session`` whose every connection comes from the loopback ``address``."""
    return _session_from(_loopback(address))


def client_from(base: str, address: str, **kwargs: Any) -> Client:
    """The project's client, from ``address``; no retries unless asked (a test sees every 429)."""
    kwargs.setdefault("retry", NO_RETRY)
    return Client(base, session=session_from(address), **kwargs)


def socket_from(base: str, address: str, timeout: float = 5.0) -> socket.socket:
    """A raw TCP connection to ``base`` (``http://host:port``) from ``address``: for clients
    that misbehave below HTTP (slow headers, idle sockets)."""
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port.rstrip("/"))), timeout=timeout,
                                    source_address=(_loopback(address), 0))
