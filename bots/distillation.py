"""How the weights of :mod:`bots.distilled` are made, and how any way of choosing is judged.

``python -m bots.distillation sample finnish 5000 5093 FILE`` plays standard self-play and, at
15% of the play-phase decisions whose candidates are the bot's discard or meld and other
discards, plays every candidate to the hand's end in the same sampled worlds, writing one JSON
line a decision. ``... sample PRESET FIRST LAST FILE draw,go_out,answer`` samples other kinds of
decision (:data:`KINDS`) in the same way. ``python -m bots.distillation fit FILE...`` fits both
models and prints their weights and the gain over the standard bot's choices on held-out
games, judged by the recorded rollouts (docs/benchmarks/bots.md, issue 15, says what the weights
in use were fit on). ``python -m bots.distillation audit FILE...`` judges, by the same
rollouts, the judgment, the expert's search and a search to the hand's end on half the worlds.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import orjson

from bots import CPU, Budget, get, is_bot, policy
from bots.distilled import chosen, decision_kind, dot, feature_rows, judge
from bots.evaluation import least_squares
from bots.expert import Expert
from bots.simulate import play_game
from bots.standard import Standard
from bots.stats import mean_margin
from bots.view import SeatView, determinize
from engine.legal import legal_actions
from engine.rules import RuleOptions, resolve
from engine.state import State

Action = dict[str, Any]

# The share of a game's decisions that is sampled, by phase: of the play-phase decisions; of
# the draws where the pile may be taken (fewer than those of play); of the answers to a
# partner's "may I go out?" (a few a game).
SAMPLE_RATES = {"play": 0.15, "draw": 0.5, "answer": 1.0}
# What a sampled decision is, and the phase it is made in: the judgment's two kinds
# (bots.distilled.decision_kind), going out (or asking to) against a discard, a draw where the
# pile may be taken, and the answer to a partner who asks.
PHASE_OF_KIND = {"discard": "play", "hold": "play", "go_out": "play", "draw": "draw", "answer": "answer"}
KINDS = tuple(PHASE_OF_KIND)
FIT_KINDS = ("discard", "hold")  # the kinds the judgment's models are fit on (and sampled by default)
AUDIT_BUDGET_MS = 15.0  # the expert's search in the audit: the registered budget, on the CPU clock
WORLDS = 20  # rollouts to the hand's end per candidate of a sampled decision
HAND_END = 10**6  # a rollout horizon and step cap that only the hand's end reaches
MIN_WORLDS = 10  # a decision whose candidates were all legal in fewer worlds is dropped
RIDGE = 10.0
FOLDS = 5


def _pile_takeable(actions: list[Action]) -> bool:
    return any(a["type"] == "take_pile" for a in actions)


def sampled_kind(phase: str, candidates: list[Action]) -> str | None:
    """The kind (:data:`KINDS`) of a decision among the expert's ``candidates``: in play, the
    only candidates other than the judgment's discards are going out and asking to."""
    if len(candidates) < 2:
        return None
    if phase == "draw":
        return "draw" if _pile_takeable(candidates) else None
    if phase == "play":
        return decision_kind(candidates) or "go_out"
    return "answer" if phase == "answer" else None


def sample(preset: str, games: range, worlds: int, out: Any, kinds: tuple[str, ...] = FIT_KINDS,
           opponents: tuple[str, ...] = ()) -> None:
    """Write one JSON line per sampled decision of standard self-play: the whole state (an
    offline file: only the seat's view of it is read back, through :class:`SeatView`), the
    candidates, and each candidate's hand-end score difference in each of ``worlds`` sampled
    worlds (None where it was illegal). Only decisions of ``kinds`` are sampled; with the
    default, the same decisions as the weights in use were fit on.

    ``opponents``: bots (styles) the other side plays, one a game in turn (game ``g`` plays
    ``opponents[g % len(opponents)]``, the standard bot's side alternating between the teams);
    only the standard bot's decisions are sampled, and the rollouts play the opposing seats
    with that game's style. Empty: standard self-play, every decision sampled."""
    rules = resolve(preset)
    deep = Expert(rollout=Standard(), horizon=HAND_END, max_steps=HAND_END)
    for game in games:
        style = opponents[game % len(opponents)] if opponents else None
        ours = game // len(opponents) % rules.teams if opponents else None  # each style meets both sides
        _sample_game(rules, game, worlds, deep, out, kinds, style, ours)


def _sample_game(rules: RuleOptions, game: int, worlds: int, deep: Expert, out: Any, kinds: tuple[str, ...],
                 style: str | None = None, ours: int | None = None) -> None:
    """One game of :func:`sample` (its deal and its sampling seeded by ``game``); ``style``
    plays the seats of the teams other than ``ours``."""
    rng = random.Random(game)
    player = policy("standard", random.Random(game + 1))
    rates = {PHASE_OF_KIND[k]: SAMPLE_RATES[PHASE_OF_KIND[k]] for k in kinds}
    them = policy(style, random.Random(game + 2)) if style else player

    def watch(state: State, seat: int, actions: list[Action]) -> Action:
        if ours is not None and rules.team_of(seat) != ours:
            return them(state, seat, actions)
        choice = player(state, seat, actions)
        rate = rates.get(state.phase)
        if len(actions) < 2 or rate is None:
            return choice
        if state.phase == "draw" and not _pile_takeable(actions):
            return choice
        if rng.random() >= rate:
            return choice
        v = SeatView(state, seat)
        r = random.Random(rng.getrandbits(32))
        candidates = deep.candidates(v, actions, deep.greedy.choose(v, actions, r))
        kind = sampled_kind(state.phase, candidates)
        if kind not in kinds:
            return choice
        values: list[list[float | None]] = [[] for _ in candidates]
        models = {p: get(style) for p in v.opponents} if style else None
        for _ in range(worlds):
            world = determinize(state, seat, r)
            seed = r.getrandbits(32)
            for i, a in enumerate(candidates):
                values[i].append(deep.rollout(world, seat, a, random.Random(seed), models))
        out.write(orjson.dumps({"game": game, "seat": seat, "kind": kind, "state": state.to_json(),
                                "candidates": candidates, "values": values, "opponents": style}) + b"\n")
        return choice

    play_game(rules, random.Random(game), watch)


Decision = tuple[int, list[list[float]], list[float]]  # game, feature rows, each candidate's mean


def _decisions(lines: list[dict[str, Any]], kind: str) -> list[Decision]:
    """The decisions of ``lines`` that model ``kind`` judges, with the mean of each candidate
    over the worlds where all were legal. Discard rows are centred on the decision's mean."""
    bot = Standard()
    out = []
    for line in lines:
        candidates, values = line["candidates"], line["values"]
        worlds = _common_worlds(values)
        if decision_kind(candidates) != kind or worlds is None:
            continue
        v = SeatView(State.from_json(line["state"]), line["seat"])
        if v.next_opponent() is None:
            continue
        rows = feature_rows(bot, v, candidates, kind)
        if kind == "discard":
            centre = [sum(col) / len(col) for col in zip(*rows, strict=True)]
            rows = [[x - c for x, c in zip(row, centre, strict=True)] for row in rows]
        out.append((line["game"], rows, _means(values, worlds)))
    return out


def _common_worlds(values: list[list[float | None]]) -> list[int] | None:
    """The sampled worlds where every candidate was legal; None if fewer than :data:`MIN_WORLDS`."""
    common = [w for w in range(len(values[0])) if all(v[w] is not None for v in values)]
    return common if len(common) >= MIN_WORLDS else None


def _means(values: list[list[float | None]], worlds: list[int]) -> list[float]:
    """Each candidate's mean over ``worlds`` (where all of them were legal)."""
    return [sum(v[w] for w in worlds) / len(worlds) for v in values]  # type: ignore[misc]


def _targets(kind: str, means: list[float]) -> list[float]:
    """What a row predicts: a discard's mean less the decision's; a discard's mean less the meld's."""
    if kind == "discard":
        mean = sum(means) / len(means)
        return [m - mean for m in means]
    return [m - means[0] for m in means[1:]]


def fit(lines: list[dict[str, Any]], kind: str) -> tuple[list[float], float, float]:
    """Weights for ``kind`` on all ``lines``, and the held-out gain over the bot's own choice
    (points a decision, the recorded rollouts as the judge; folds by game) with its 95% margin."""
    data = _decisions(lines, kind)
    if not data:
        raise ValueError(f"no {kind} decisions in these lines")
    games = sorted({g for g, _, _ in data})
    random.Random(0).shuffle(games)
    gains: list[float] = []
    for k in range(FOLDS):
        held = set(games[k::FOLDS])
        train = [d for d in data if d[0] not in held]
        if not held or not train:
            continue
        w = _solve(train, kind)
        for _, rows, means in (d for d in data if d[0] in held):
            gains.append(means[chosen(kind, [dot(w, row) for row in rows])] - means[0])
    mean, margin = mean_margin(gains)  # too few games to hold any out: an infinite margin
    return _solve(data, kind), mean, margin


def _solve(data: list[Decision], kind: str) -> list[float]:
    xs = [row for _, rows, _ in data for row in rows]
    ys = [t for _, _, means in data for t in _targets(kind, means)]
    return least_squares(xs, ys, RIDGE)


AUDITED = ("judgment", "search", "half", "best")
AUDIT_HEADINGS = {
    "judgment": "the judgment (bots.distilled)",
    "search": "the search (expert-2026-12)",
    "half": "hand-end search, half the worlds",
    "best": "best mean (biased up)",
}


def audit(lines: list[dict[str, Any]], budget_ms: float = AUDIT_BUDGET_MS) -> dict[str, dict[str, list[float]]]:
    """By kind of decision, each way of choosing's gain over the standard bot's choice (points
    a decision), judged by the recorded rollouts to the hand's end:

    * ``judgment``: :func:`bots.distilled.judge`, where it applies;
    * ``search``: the expert's two-turn search at ``budget_ms`` of CPU (the search of every
      decision, as before the judgment: ``expert-2026-12``);
    * ``half``: the candidate with the best mean over half the worlds, judged by the other
      half: what a search to the hand's end in that many worlds would gain;
    * ``best``: the best mean less the bot's: an upper bound, biased up by the sample's luck.

    Where the weights were fit on the same decisions, ``judgment`` is biased up too."""
    bot, searcher = Standard(), get("expert-2026-12")
    budget = Budget(budget_ms, clock=CPU)
    gains: dict[str, dict[str, list[float]]] = {}
    for n, line in enumerate(lines):
        candidates, values = line["candidates"], line["values"]
        worlds = _common_worlds(values)
        state, seat = State.from_json(line["state"]), line["seat"]
        kind = line.get("kind") or sampled_kind(state.phase, candidates)  # files before "kind" held play only
        if kind is None or worlds is None:
            continue
        means = _means(values, worlds)
        by = gains.setdefault(kind, {name: [] for name in AUDITED})
        v = SeatView(state, seat)
        judged = judge(bot, v, candidates)
        if judged is not None:
            by["judgment"].append(means[candidates.index(judged)] - means[0])
        searched = searcher.choose(v, legal_actions(state, seat), random.Random(n), budget)
        if searched in candidates:
            by["search"].append(means[candidates.index(searched)] - means[0])
        half = len(worlds) // 2
        first, second = _means(values, worlds[:half]), _means(values, worlds[half:])
        pick = max(range(len(first)), key=lambda i: (first[i], i == 0))
        by["half"].append(second[pick] - second[0])
        by["best"].append(max(means) - means[0])
    return gains


def _print_audit(gains: dict[str, dict[str, list[float]]]) -> None:
    print("gain over the standard bot's choice, points a decision (95%), judged by rollouts to the hand's end")
    print(f"{'kind':<8} {'decisions':>9}  " + "  ".join(f"{AUDIT_HEADINGS[name]:>34}" for name in AUDITED))
    for kind in KINDS:
        if kind not in gains:
            continue
        by = gains[kind]
        cells = []
        for name in AUDITED:
            mean, margin = mean_margin(by[name])
            cells.append(f"{mean:+8.1f} +/- {margin:5.1f} ({len(by[name]):>5})" if by[name] else "-")
        print(f"{kind:<8} {len(by['best']):>9}  " + "  ".join(f"{c:>34}" for c in cells))


def _lines(paths: list[str]) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for path in paths for raw in Path(path).read_bytes().splitlines() if raw.strip()]


USAGE = ("usage: python -m bots.distillation sample PRESET FIRST_GAME LAST_GAME FILE [KIND,...] [OPPONENT,...] "
         f"[WORLDS] | fit FILE... | audit FILE...   (kinds: {', '.join(KINDS)}; default {','.join(FIT_KINDS)}; "
         f"opponents: styles the other side plays, one a game in turn; worlds: default {WORLDS})")


def main(argv: list[str]) -> int:
    if len(argv) in (5, 6, 7, 8) and argv[0] == "sample":
        preset, first, last, path = argv[1], int(argv[2]), int(argv[3]), argv[4]
        kinds = tuple(argv[5].split(",")) if len(argv) >= 6 and argv[5] else FIT_KINDS
        opponents = tuple(argv[6].split(",")) if len(argv) >= 7 else ()
        worlds = int(argv[7]) if len(argv) == 8 else WORLDS
        if not set(kinds) <= set(KINDS) or not all(is_bot(o) for o in opponents) or worlds < MIN_WORLDS:
            print(USAGE, file=sys.stderr)
            return 2
        with open(path, "ab") as out:
            sample(preset, range(first, last), worlds, out, kinds, opponents)
        return 0
    if len(argv) >= 2 and argv[0] == "audit":
        _print_audit(audit(_lines(argv[1:])))
        return 0
    if len(argv) >= 2 and argv[0] == "fit":
        lines = _lines(argv[1:])
        for kind in FIT_KINDS:
            w, gain, margin = fit(lines, kind)
            print(f"{kind}: held-out gain {gain:+.2f} +/- {margin:.2f} points a decision")
            print("(" + ", ".join(f"{x:.3f}" for x in w) + ")")
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
