"""A change of a game written once, as steps that ask for their Redis round trips instead of
making them.

The code that decides a change (:func:`service.games.move_steps`, :func:`commit_steps`) is a
generator: it yields a step (:class:`Load`, :class:`Recall`, :class:`Commit`,
:class:`Settle`), its driver performs it and sends the reply back (or throws the failure
in). Why: the same move is answered by Flask's threads and the bot worker, which talk to
Redis with the blocking client (:func:`run`), and by the event loop, which sends the same
commands over one pipelined connection (``web.loop_routes``). With the steps written once,
those are two drivers of one piece of code, not two copies of it. (The steps are named
tuples: one of them is made per round trip, on the hottest path of the service.)
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Generic, NamedTuple, TypeVar

from service.store import Store

T = TypeVar("T")


class Load(NamedTuple):
    """Read the game's record. Reply: the :class:`service.store.Record`, or None (no game)."""

    game_id: str


class Recall(NamedTuple):
    """Read the answer stored for an Idempotency-Key (its expiry restarts). Reply: the
    stored bytes, or None."""

    game_id: str
    seat: int
    key: str
    seconds: int


class Commit(NamedTuple):
    """The compare-and-set of a change: ``args`` are :meth:`service.store.Store.commit`'s.
    Reply: the store's ``Commit``; a change not confirmed on disk is thrown in as
    :class:`service.store.NotDurable`."""

    game_id: str
    args: dict[str, Any]


class Settle(NamedTuple):
    """Follow-ups of a commit that use the blocking client (the bot queue, the log's fold,
    the books of games): ``fn(store, *args)``. Reply: None."""

    fn: Callable[..., None]
    args: tuple[Any, ...]


Step = Load | Recall | Commit | Settle
Steps = Generator[Step, Any, T]


class Done(NamedTuple, Generic[T]):
    """The steps ended with ``value``."""

    value: T


def advance(steps: Steps[T], reply: Any, failure: Exception | None) -> Step | Done[T]:
    """The next step of ``steps``, given the last one's reply (or its failure, thrown in);
    :class:`Done` when they end. What the steps raise is raised."""
    try:
        return steps.send(reply) if failure is None else steps.throw(failure)
    except StopIteration as end:
        return Done(end.value)


def run(store: Store, steps: Steps[T]) -> T:
    """Drive ``steps`` to their end with the blocking client; what they raise is raised."""
    reply: Any = None
    failure: Exception | None = None
    while not isinstance(step := advance(steps, reply, failure), Done):
        reply, failure = None, None
        try:
            reply = perform(store, step)
        except Exception as e:  # noqa: BLE001 - thrown into the steps, which decide (or re-raise)
            failure = e
    return step.value


def perform(store: Store, step: Step) -> Any:
    """One step, with the blocking client."""
    if isinstance(step, Load):
        return store.load(step.game_id)
    if isinstance(step, Recall):
        return store.get_idempotency(step.game_id, step.seat, step.key, step.seconds)
    if isinstance(step, Commit):
        return store.commit(**step.args)
    step.fn(store, *step.args)
    return None
