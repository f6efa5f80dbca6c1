"""Bots and the bot worker.

``worker.bots`` chooses actions (random, greedy, expert); ``worker.jobs`` is the RQ job
that plays a run of bot turns through the API's own move path and the function the API
calls to enqueue it; ``worker.sweeper`` re-enqueues games that a dead worker left waiting;
``worker.cli`` is ``canasta worker``; ``worker.tournament`` and ``worker.bench`` measure
the bots.
"""
