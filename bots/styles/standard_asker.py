"""The standard asker: our standard bot that asks the partner to go out at every chance, says
yes to every ask, and goes out whenever the engine has a plan for it.

Until 2026-12-07 this was the held-out ``asker``; it chooses as our standard bot in 99% of its
decisions (``canasta bench bots pool``'s agreement), so a match against it measured the
standard bot against itself. It now sits in the tuning pool; the held-out ``asker``
(:mod:`bots.styles.asker`) plays a game of its own."""

from __future__ import annotations

import random
from typing import Any

from bots.styles.written import WrittenStandard
from bots.view import SeatView
from engine.state import GRANTED

Action = dict[str, Any]
ASK = {"type": "ask_go_out"}


class StandardAsker(WrittenStandard):
    """Our standard's draws, melds and discards; no judgment of the score when going out."""

    name = "standard-asker"

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if len(actions) == 1:
            return actions[0]
        if v.phase == "answer":
            return {"type": "answer_go_out", "yes": True}
        if ASK in actions and v.permission != GRANTED:
            return ASK
        if v.phase == "play":
            plan = v.going_out_plan()
            if plan and plan[0] in actions:
                return plan[0]
        return super().choose(v, actions, rng, budget)
