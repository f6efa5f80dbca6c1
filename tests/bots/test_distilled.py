"""The expert's distilled judgment (bots.distilled): where it applies, that the expert plays it
without searching, and that its offline sampling and fitting (bots.distillation) run end to end."""

from __future__ import annotations

import io
import random

import orjson

import engine
from bots import Budget, distillation, distilled
from bots.expert import Expert
from bots.standard import Standard
from bots.view import SeatView
from tests.bots.test_bots import positions


class CountingExpert(Expert):
    """The expert, counting the rollouts it plays."""

    rollouts = 0

    def rollout(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.rollouts += 1
        return super().rollout(*args, **kwargs)


def judged_positions(preset: str, count: int, seed: int):
    """Play-phase positions whose expert candidates are the bot's choice and other discards."""
    expert = Expert(rollout=Standard())
    for n, (state, seat) in enumerate(positions(preset, count, seed)):
        if state.phase != "play":
            continue
        actions = engine.legal_actions(state, seat)
        view = SeatView(state, seat)
        candidates = expert.candidates(view, actions, expert.greedy.choose(view, actions, random.Random(n)))
        if len(candidates) > 1 and all(a["type"] == "discard" for a in candidates[1:]):
            yield n, state, seat, actions, candidates


def test_the_weights_name_every_feature() -> None:
    for models in distilled.WEIGHTS.values():
        assert len(models["discard"]) == len(distilled.DISCARD_FEATURES)
        assert len(models["hold"]) == len(distilled.HOLD_FEATURES)


def test_it_judges_partnership_discards_and_melds_only() -> None:
    """Weights exist for partnerships: there it picks one of the candidates (the meld, or a
    discard instead); in a two-player game, or where going out is a candidate, the search decides."""
    bot, judged = Standard(), {"discard": 0, "meld": 0}
    for _, state, seat, _, candidates in judged_positions("finnish", 120, seed=21):
        view = SeatView(state, seat)
        if view.next_opponent() is None:
            continue
        choice = distilled.judge(bot, view, candidates)
        assert choice in candidates
        judged["discard" if candidates[0]["type"] == "discard" else "meld"] += 1
        going_out = [*candidates[:1], {"type": "ask_go_out"}, *candidates[1:]]
        assert distilled.judge(bot, view, going_out) is None
    assert judged["discard"] >= 20 and judged["meld"] >= 3, judged
    for _, state, seat, _, candidates in judged_positions("finnish-2p", 40, seed=22):
        assert distilled.judge(bot, SeatView(state, seat), candidates) is None


def test_the_expert_plays_the_judgment_without_a_rollout() -> None:
    """In partnerships a judged decision costs a few dot products: the budget is not spent."""
    expert, bot = CountingExpert(rollout=Standard(), use_distilled=True), Standard()
    checked = 0
    for n, state, seat, actions, candidates in judged_positions("finnish", 80, seed=23):
        view = SeatView(state, seat)
        if view.next_opponent() is None:
            continue
        choice = expert.choose(SeatView(state, seat), actions, random.Random(n), Budget(ms=50, rollouts=30))
        assert choice == distilled.judge(bot, view, candidates)
        checked += 1
    assert checked >= 10 and expert.rollouts == 0
    searching = CountingExpert(rollout=Standard())  # the judgment off: the search as before
    n, state, seat, actions, _ = next(judged_positions("finnish", 80, seed=23))
    searching.choose(SeatView(state, seat), actions, random.Random(n), Budget(ms=50, rollouts=30))
    assert searching.rollouts >= 30


def test_sampling_and_fitting_run_end_to_end() -> None:
    """Two games' decisions played to the hand's end, then the fit, with a held-out gain."""
    out = io.BytesIO()
    distillation.sample("finnish", range(2), distillation.MIN_WORLDS, out)
    lines = [orjson.loads(raw) for raw in out.getvalue().splitlines()]
    assert lines and all(len(line["values"]) == len(line["candidates"]) for line in lines)
    assert all(len(v) == distillation.MIN_WORLDS for line in lines for v in line["values"])
    kinds = {line["candidates"][0]["type"] for line in lines}
    assert "discard" in kinds
    assert {line["kind"] for line in lines} <= set(distillation.FIT_KINDS)  # by default, what the models fit
    weights, gain, margin = distillation.fit(lines, "discard")
    assert len(weights) == len(distilled.DISCARD_FEATURES) and 0 <= margin < float("inf")


def test_the_judgment_alone_never_searches() -> None:
    """``standard-judged`` (a baseline): the judgment where it applies, else the standard
    bot's own choice, draws and going out included; not one rollout."""
    alone = CountingExpert(rollout=Standard(), use_distilled=True, search=False)
    bot, judged = Standard(), 0
    for n, (state, seat) in enumerate(positions("finnish", 120, seed=24)):
        actions = engine.legal_actions(state, seat)
        if len(actions) < 2:
            continue
        view = SeatView(state, seat)
        default = bot.choose(view, actions, random.Random(n))
        choice = alone.choose(SeatView(state, seat), actions, random.Random(n), Budget(ms=50, rollouts=30))
        verdict = distilled.judge(bot, view, alone.candidates(view, actions, default))
        assert choice == (verdict if verdict is not None else default)
        judged += verdict is not None
    assert alone.rollouts == 0 and judged >= 10


def test_other_kinds_are_sampled_and_audited() -> None:
    """Draws where the pile may be taken, going out and the partner's answers, sampled like the
    judgment's decisions; the audit judges each way of choosing by the recorded rollouts, by kind."""
    out = io.BytesIO()
    kinds = ("draw", "go_out", "answer")
    distillation.sample("finnish", range(3), distillation.MIN_WORLDS, out, kinds=kinds)
    lines = [orjson.loads(raw) for raw in out.getvalue().splitlines()]
    assert {line["kind"] for line in lines} == set(kinds)
    for line in lines:
        types = {a["type"] for a in line["candidates"]}
        assert ("take_pile" in types) == (line["kind"] == "draw")
        assert (types == {"answer_go_out"}) == (line["kind"] == "answer")
    gains = distillation.audit(lines, budget_ms=2.0)
    assert set(gains) == set(kinds)
    for by in gains.values():
        assert by["judgment"] == []  # the judgment has no model for these
        assert by["best"] and all(g >= 0 for g in by["best"])  # the bot's own mean is among them
        assert len(by["search"]) == len(by["half"]) == len(by["best"])


def test_sampling_against_styles_samples_only_the_standard_side() -> None:
    """With opponents, game g's other side plays opponents[g % n] (rollouts too), and only the
    standard bot's seats are sampled; each style meets both sides over the games."""
    out = io.BytesIO()
    distillation.sample("finnish", range(4), 1, out, opponents=("pile-eager", "meld-all"))
    lines = [orjson.loads(raw) for raw in out.getvalue().splitlines()]
    assert {line["opponents"] for line in lines} == {"pile-eager", "meld-all"}
    for line in lines:
        ours = line["game"] // 2 % 2
        assert line["seat"] % 2 == ours  # four players: seats 0 and 2 are team 0
    assert {line["game"] // 2 % 2 for line in lines} == {0, 1}


def test_the_margin_leaves_two_player_play_as_it_was() -> None:
    """The judgment serves partnerships only: in two players the expert chooses what the
    expert before issue 37 chose (so the two-player results cannot fall)."""
    import bots

    for n, (state, seat) in enumerate(positions("finnish-2p", 8, seed=21)):
        budget = Budget(ms=60_000, rollouts=12)
        assert (bots.choose("expert", state, seat, random.Random(n), budget)
                == bots.choose("expert-2026-12-06", state, seat, random.Random(n), budget))
