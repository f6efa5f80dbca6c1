"""The bot worker: RQ jobs that play bot seats through the API's own move path.

``worker.jobs`` is the RQ job that plays a run of bot turns (the API enqueues it by name,
:mod:`service.botqueue`); ``worker.recovery``'s ``ensure_job`` replaces a lost or dead one; ``worker.runner``
plays the run; ``worker.lease`` holds a game for one job; ``worker.sweeper`` re-enqueues
games that a dead worker left waiting; ``worker.cli`` is ``canasta worker``;
``bench.bots`` measures bot-turn latency. The bots themselves (pure policies over the
engine) are the top-level package ``bots``.
"""
