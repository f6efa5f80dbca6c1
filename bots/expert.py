"""The expert bot: determinized Monte Carlo search over rule-bot rollouts, within a time budget.

The rollout bot is a :class:`~bots.greedy.Greedy` or a subclass; the registered expert plays
:class:`~bots.standard.Standard` (``bots._registry``), named "greedy" below. For each
decision that is not forced:

1. candidates: the greedy choice, then going out and the best discards by greedy's own
   scores (no other meld: :data:`OTHER_MELDS`), or the other draw-phase and answer options,
   :data:`MAX_CANDIDATES` in all (pruning keeps the budget for the moves that differ);
2. worlds: the hidden cards are dealt again at random, consistent with what the seat sees
   (:func:`~bots.view.determinize`: the pile and the cards known to come with it stay where
   the table saw them); every candidate is tried in the same worlds
   (common random numbers: the comparison is not drowned by the luck of the sample);
3. rollout: from the candidate, every seat plays greedy on the sampled world until the
   next opponent's turn is over (or the hand ends);
4. score: the hand-score difference if the hand ended, else a linear estimate of it fit on
   greedy self-play (:mod:`bots.evaluation`).

Why a short horizon: a step of standard self-play costs ~0.15 ms (the bot, the legal actions
and the move) and a hand ~95 moves, so a rollout to the hand's end would spend a 15 ms budget
on one world; only a short look-ahead gives enough worlds per candidate for the mean to mean
something.

In partnerships this search chooses no better than the standard bot: judged by rollouts to
the hand's end, its discards gain nothing over the bot's own. Rollouts to the hand's end do
(in 30 worlds a decision they won 65% of four-player games against the standard bot), at ~320
ms of CPU a decision. So there, with ``use_distilled`` (where :mod:`bots.distilled` has
weights: partnerships that go out with one canasta), the discards and the choice between the
bot's meld and a discard are not searched but judged by linear models fit offline on such
rollouts; going out, the draw and the answers are still searched.

That judgment was fit on rollouts where every seat plays the standard bot, so it learned our
standard's habits as well as the moves' worth: against other styles (:mod:`bots.styles`, issue
37) its small departures from the bot lost. It departs only where it predicts a clear gain
(:data:`bots.distilled.JUDGE_MARGIN`). The rollouts can play the opposing seats with other
models (``opponents``, one drawn per seat and world); the registered expert keeps the standard
bot there (a mixture of the tuning styles measured no gain on the tuning pool).

Measured at 15 ms against the standard bot (BENCHMARKS.md; issue 15's sessions in
docs/benchmarks/bots.md): ~78% of ``finnish-2p``
games, ~62% in four-player ``finnish`` (~50% before the distilled judgment).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bots import distilled
from bots.evaluation import evaluate
from bots.greedy import Greedy
from bots.standard import Standard
from bots.view import SeatView, determinize
from engine.cards import parse_card
from engine.errors import IllegalMove
from engine.legal import legal_actions_and_plan
from engine.moves import apply
from engine.state import State

Action = dict[str, Any]

# Three: the rule bot's choice and its two best alternatives. At a 15 ms budget a decision
# sees ~8 worlds; split over 3 candidates instead of 6 the means are less noisy (finnish-2p,
# 40 rollouts a decision, 80 games against standard: 71% (61-80) with 3, 63% (52-72) with 6).
MAX_CANDIDATES = 3
# No meld or add but the rule bot's own: the leaf evaluation counts a meld's points on the
# table and cannot see what a card kept in hand is worth (the standard bot keeps melds back
# while the pile is worth taking), so an extra meld candidate mostly undid that. The search
# may still decline the bot's meld for a discard. Against the standard bot in finnish-2p, 200
# games a seed: 64.5% -> 82.0% (seed 600), 63.0% -> 80.0% (seed 601); 77.5% over 400 games of
# seed 99. Four players ~50% either way. The expert before issue 15 tried two.
OTHER_MELDS = 0
MAX_ROLLOUT_STEPS = 40
OVERRUN_SECONDS = 10.0  # past the deadline a rollout cap stops anyway
TIE = 1e-9  # means closer than this are equal: the earlier candidate (greedy's first) keeps it
SWITCH_MARGIN = 0.0  # points by which a candidate must beat the rule bot's choice (mean over worlds)


class Expert:
    """Search on sampled worlds; greedy plays every seat inside them."""

    name = "expert"

    def __init__(self, rollout: Greedy | None = None, horizon: int = 2, switch_margin: float = SWITCH_MARGIN,
                 max_candidates: int = MAX_CANDIDATES, other_melds: int = OTHER_MELDS,
                 max_steps: int = MAX_ROLLOUT_STEPS, use_distilled: bool = False, search: bool = True,
                 opponents: Sequence[Any] = (),
                 judge_margin: float = distilled.JUDGE_MARGIN) -> None:
        self.greedy = rollout or Greedy()
        # the models of the opposing seats in the rollouts, one drawn per seat and world (empty:
        # the rollout bot plays them too, i.e. the search assumes they play as it does)
        self.opponents = tuple(opponents)
        self.max_candidates = max_candidates
        self.other_melds = other_melds  # melds and adds tried besides the rule bot's own choice
        self.horizon = horizon  # turn changes a rollout plays through (2: to the next seat's turn end)
        self.max_steps = max_steps  # moves a rollout plays at most
        self.switch_margin = switch_margin
        # the bot whose scores bots.distilled corrects, where it has weights (None: always search)
        self.judge_bot = self.greedy if use_distilled and isinstance(self.greedy, Standard) else None
        self.judge_margin = judge_margin  # what the judgment must gain to depart from the bot's choice
        # False: the rule bot's choice where the judgment does not apply (a baseline that
        # measures what the search adds to the judgment)
        self.search = search

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        from bots import Budget

        b = Budget.of(budget)
        default = self.greedy.choose(v, actions, rng)
        if self.decides_game(v):
            return default
        candidates = self.candidates(v, actions, default)
        if len(candidates) <= 1:
            return default
        if self.judge_bot is not None:
            judged = distilled.judge(self.judge_bot, v, candidates, self.judge_margin)
            if judged is not None:
                return judged  # a partnership's discard or meld: what deep search taught, at once
        if not self.search:
            return default
        state = v._s  # the sampled worlds are built from the seat's view only (determinize)
        seat = v.seat
        clock = b.timer
        started = clock()
        deadline = started + b.ms / 1000.0
        totals = [0.0] * len(candidates)
        counts = [0] * len(candidates)
        worlds = 0
        while True:
            world = determinize(state, seat, rng)
            models = self.draw_opponents(v, rng)
            seed = rng.getrandbits(32)
            for i, action in enumerate(candidates):
                value = self.rollout(world, seat, action, random.Random(seed), models)
                if value is not None:
                    totals[i] += value
                    counts[i] += 1
            worlds += 1
            if b.rollouts is not None and worlds * len(candidates) >= b.rollouts:
                break
            now = clock()
            # stop when the next world would end past the deadline (a world takes about the
            # mean so far): the budget is kept on average, not overrun by a whole world
            if b.rollouts is None and now + (now - started) / worlds >= deadline:
                break
            if b.rollouts is not None and clock() >= deadline + OVERRUN_SECONDS:
                break  # a cap with an absurd budget must still end
        best, best_mean = 0, float("-inf")
        for i in range(len(candidates)):
            if counts[i]:
                mean = totals[i] / counts[i]
                if mean > best_mean + TIE:
                    best, best_mean = i, mean
        # the rule bot's own choice stands unless the search finds clearly better: with a
        # few worlds per candidate, small differences are the sample's luck, not the move's
        if best and counts[0] and best_mean - totals[0] / counts[0] < self.switch_margin:
            return candidates[0]
        return candidates[best]

    def decides_game(self, v: SeatView) -> bool:
        """Going out now would end the game, won or lost (the standard bot's
        :meth:`~bots.standard.Standard.game_after_going_out`): its choice stands, since the
        search values the hand, not the game."""
        g = self.greedy
        if not (isinstance(g, Standard) and g.play_for_the_game):
            return False
        if v.phase == "answer" or (v.phase == "play" and g.plan_in_reach(v)):
            return g.game_after_going_out(v) != 0
        return False

    # -- candidates ---------------------------------------------------------------------
    def candidates(self, v: SeatView, actions: list[Action], default: Action) -> list[Action]:
        """The greedy choice first, then the alternatives worth comparing."""
        if v.phase in ("answer", "draw"):
            out = [default] + [a for a in actions if a != default]
            return out[:self.max_candidates]
        g = self.greedy
        out = [default]
        plan = g.plan_in_reach(v)
        if plan and plan[0] in actions and plan[0] not in out:
            out.append(plan[0])
        if self.other_melds:
            melds = [a for a in actions if a["type"] in ("meld", "add")]
            melds.sort(key=lambda a: -g.meld_score(v, a))
            for a in melds[:self.other_melds]:
                if a not in out:
                    out.append(a)
        unseen = v.unseen_counts()
        discards = [a for a in actions if a["type"] == "discard"]
        discards.sort(key=lambda a: (g.discard_score(v, parse_card(a["card"]), unseen), a["card"]))
        for a in discards:
            if len(out) >= self.max_candidates:
                break
            if a not in out:
                out.append(a)
        return out

    # -- rollouts -----------------------------------------------------------------------
    def draw_opponents(self, v: SeatView, rng: random.Random) -> dict[int, Any] | None:
        """One model of each opposing seat for one world, drawn from :attr:`opponents`; every
        candidate meets the same ones (common random numbers). None: no mixture."""
        if not self.opponents:
            return None
        return {p: rng.choice(self.opponents) for p in v.opponents}

    def rollout(self, world: State, seat: int, action: Action, rng: random.Random,
                models: dict[int, Any] | None = None) -> float | None:
        """The value for ``seat``'s team of playing ``action`` in ``world``; None if illegal there.
        ``models``: the bot of each opposing seat (:meth:`draw_opponents`; default the rollout bot)."""
        try:
            s = apply(world, seat, action)
        except IllegalMove:
            return None
        team = world.rules.team_of(seat)
        turns_seen = 0
        last_turn = world.turn
        steps = 0
        g = self.greedy
        while s.phase in ("draw", "play", "answer") and steps < self.max_steps:
            if s.turn != last_turn:
                turns_seen += 1
                last_turn = s.turn
                if turns_seen >= self.horizon:
                    break
            actor = s.to_act
            acts, plan = legal_actions_and_plan(s, actor)
            if not acts:
                break
            bot = models.get(actor, g) if models else g
            choice = acts[0] if len(acts) == 1 else bot.choose(SeatView(s, actor).knowing_plan(plan), acts, rng)
            s = apply(s, actor, choice)
            steps += 1
        return evaluate(s, team, g.name)

