"""How the weights of :mod:`bots.distilled` are made: decisions sampled and fitted offline.

``python -m bots.distillation sample finnish 5000 5093 FILE`` plays standard self-play and, at
15% of the play-phase decisions whose candidates are the bot's discard or meld and other
discards, plays every candidate to the hand's end in the same sampled worlds, writing one JSON
line a decision. ``python -m bots.distillation fit FILE...`` fits both models and prints their
weights and the gain over the standard bot's choices on held-out games, judged by the
recorded rollouts (BENCHMARKS.md, issue 15, says what the weights in use were fit on).
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any

import orjson

from bots import policy
from bots.distilled import chosen, decision_kind, dot, feature_rows
from bots.evaluation import least_squares
from bots.expert import Expert
from bots.simulate import play_game
from bots.standard import Standard
from bots.view import SeatView, determinize
from engine.rules import RuleOptions, resolve
from engine.state import State

Action = dict[str, Any]

SAMPLE_RATE = 0.15  # of the play-phase decisions of a game
WORLDS = 20  # rollouts to the hand's end per candidate of a sampled decision
HAND_END = 10**6  # a rollout horizon and step cap that only the hand's end reaches
MIN_WORLDS = 10  # a decision whose candidates were all legal in fewer worlds is dropped
RIDGE = 10.0
FOLDS = 5


def sample(preset: str, games: range, worlds: int, out: Any) -> None:
    """Write one JSON line per sampled decision of standard self-play: the whole state (an
    offline file: only the seat's view of it is read back, through :class:`SeatView`), the
    candidates, and each candidate's hand-end score difference in each of ``worlds`` sampled
    worlds (None where it was illegal)."""
    rules = resolve(preset)
    deep = Expert(rollout=Standard(), horizon=HAND_END, max_steps=HAND_END)
    for game in games:
        _sample_game(rules, game, worlds, deep, out)


def _sample_game(rules: RuleOptions, game: int, worlds: int, deep: Expert, out: Any) -> None:
    """One game of :func:`sample` (its deal and its sampling seeded by ``game``)."""
    rng = random.Random(game)
    player = policy("standard", random.Random(game + 1))

    def watch(state: State, seat: int, actions: list[Action]) -> Action:
        choice = player(state, seat, actions)
        if len(actions) < 2 or state.phase != "play" or rng.random() >= SAMPLE_RATE:
            return choice
        v = SeatView(state, seat)
        r = random.Random(rng.getrandbits(32))
        candidates = deep.candidates(v, actions, deep.greedy.choose(v, actions, r))
        if decision_kind(candidates) is None:
            return choice
        values: list[list[float | None]] = [[] for _ in candidates]
        for _ in range(worlds):
            world = determinize(state, seat, r)
            seed = r.getrandbits(32)
            for i, a in enumerate(candidates):
                values[i].append(deep.rollout(world, seat, a, random.Random(seed)))
        out.write(orjson.dumps({"game": game, "seat": seat, "state": state.to_json(),
                                "candidates": candidates, "values": values}) + b"\n")
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
        if decision_kind(candidates) != kind:
            continue
        worlds = [w for w in range(len(values[0])) if all(v[w] is not None for v in values)]
        if len(worlds) < MIN_WORLDS:
            continue
        v = SeatView(State.from_json(line["state"]), line["seat"])
        if v.next_opponent() is None:
            continue
        rows = feature_rows(bot, v, candidates, kind)
        if kind == "discard":
            centre = [sum(col) / len(col) for col in zip(*rows, strict=True)]
            rows = [[x - c for x, c in zip(row, centre, strict=True)] for row in rows]
        out.append((line["game"], rows, [sum(v[w] for w in worlds) / len(worlds) for v in values]))
    return out


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
    if len(gains) < 2:
        return _solve(data, kind), 0.0, math.inf  # too few games to hold any out
    mean = sum(gains) / len(gains)
    margin = 1.96 * math.sqrt(sum((g - mean) ** 2 for g in gains) / (len(gains) - 1) / len(gains))
    return _solve(data, kind), mean, margin


def _solve(data: list[Decision], kind: str) -> list[float]:
    xs = [row for _, rows, _ in data for row in rows]
    ys = [t for _, _, means in data for t in _targets(kind, means)]
    return least_squares(xs, ys, RIDGE)


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "sample":
        preset, first, last, path = argv[1], int(argv[2]), int(argv[3]), argv[4]
        with open(path, "ab") as out:
            sample(preset, range(first, last), WORLDS, out)
        return 0
    if len(argv) >= 2 and argv[0] == "fit":
        lines = [orjson.loads(raw) for path in argv[1:] for raw in Path(path).read_bytes().splitlines()]
        for kind in ("discard", "hold"):
            w, gain, margin = fit(lines, kind)
            print(f"{kind}: held-out gain {gain:+.2f} +/- {margin:.2f} points a decision")
            print("(" + ", ".join(f"{x:.3f}" for x in w) + ")")
        return 0
    print("usage: python -m bots.distillation sample PRESET FIRST_GAME LAST_GAME FILE | fit FILE...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
