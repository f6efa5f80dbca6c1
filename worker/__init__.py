"""The bot worker: RQ jobs that play bot seats through the API's own move path.

``worker.jobs`` is the RQ job that plays a run of bot turns and the function the API calls
to enqueue it; ``worker.sweeper`` re-enqueues games that a dead worker left waiting;
``worker.cli`` is ``canasta worker``; ``worker.bench`` measures bot-turn latency. The bots
themselves (pure policies over the engine) are the top-level package ``bots``.
"""
