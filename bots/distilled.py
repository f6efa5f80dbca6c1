"""The expert's judgment in partnership games, distilled from rollouts to the hand's end.

In four players the expert's short search (two turns, then the linear estimate of
:mod:`bots.evaluation`) chooses no better than the standard bot: judged by rollouts to the
hand's end, its discards gain nothing over the bot's own (BENCHMARKS.md, issue 15). Rollouts
to the hand's end do see better moves (thirty worlds of them a decision won 65% of the games
against the standard bot), but cost twenty times the budget. So their judgment is learned
offline instead, and costs a few dot products at play:

1. **sampling**: at decisions of standard self-play (:func:`sample`), the candidates the
   expert compares (the bot's choice and its next-best discards) are each played to the
   hand's end in the same sampled worlds (:func:`~bots.view.determinize`; the standard bot
   plays every seat), and the mean hand-score difference is recorded;
2. **fitting** (:func:`fit`): ridge least squares of those means on features a seat can see;
3. **play** (:func:`judge`): the candidate the model scores highest.

Two models, one per kind of decision the search departs from the bot on most:

* **which discard**: the standard bot's own discard score is a feature, so the model
  corrects it (it learns, for example, that a card the opponents have melded, or one that
  breaks a pair, costs more than the bot's rules say, and that feeding a pile of a card or so
  costs less);
* **hold or meld**: when the bot would meld or add, whether keeping the cards in hand and
  discarding instead scores more (the features of the situation and of the discard).

Weights exist for partnership games where one canasta lets a side go out (:func:`table`; fit
on ``finnish``, four players); elsewhere the search decides, as before. ``python -m bots.distilled sample finnish 0 200 FILE`` records decisions
and ``python -m bots.distilled fit FILE...`` refits (it prints the weights and the gain over
the standard bot's choices on held-out games, judged by the recorded rollouts).
"""

from __future__ import annotations

import math
import random
import sys
from typing import Any

from bots.evaluation import least_squares
from bots.standard import Standard, take_chance_known
from bots.view import SeatView
from engine.cards import IS_BLACK_THREE, IS_WILD, RANK_OF, VALUE, parse_card
from engine.state import NOT_FROZEN

Action = dict[str, Any]

NEAR_CANASTA = 5  # meld size from which one more pile makes a canasta likely
STOCK_FULL = 60.0  # stock size scaled to 1 (a four-player deal leaves ~63)
CANDIDATE_TYPES = ("discard", "meld", "add")

DISCARD_FEATURES = (
    "score",  # the standard bot's discard score (lower: the better discard by its rules)
    "danger",  # its estimate of what the next opponent gains from the card
    "take",  # the chance the next opponent can take the pile topped by the card
    "take_x_pile", "take_x_their_meld", "take_x_unopened",
    "safe",  # a natural card the next opponent cannot take the pile with
    "points", "single", "pair", "triple",  # the card, and the copies of its rank in hand
    "our_meld", "our_meld_near", "their_meld", "their_meld_near",
    "in_pile",  # cards of its rank in the pile (the next opponent would get them too)
    "black_three", "wild",
)
HOLD_FEATURES = (
    "bias", "pile", "stock", "opened", "hand", "cards_laid", "wilds_laid", "completes_canasta",
    "add", "our_canastas", "their_canastas", "threat", "next_side_opened", "frozen_pile",
    *(f"discard_{name}" for name in DISCARD_FEATURES),
)

# Fit on 4-player ``finnish`` (``sample finnish 5000 5093`` and ``6000 6100``, 20 worlds: 7 529
# decisions): "discard" predicts a discard's hand-end score relative to the other candidates',
# "hold" a discard's score minus the meld's. They serve the partnership games where one canasta
# lets a side go out (:func:`table`): in ``norwegian``, which needs two, the same judgment lost to
# the standard bot (42.5% of 1 000 games), where in ``classic``, ``bicycle`` and ``wiki`` it won
# 57-61% (BENCHMARKS.md).
WEIGHTS: dict[str, dict[str, tuple[float, ...]]] = {
    "partners, one canasta": {
        "discard": (0.011, -0.298, 56.497, -17.807, 26.611, 87.990, 22.564, -0.176, 10.223, -33.893, 27.721,
                    -32.690, -14.396, -34.357, -16.869, -17.310, -8.054, 4.003),
        "hold": (-91.694, 11.605, 213.273, 15.623, -6.553, -13.013, 5.954, -45.249, -67.449, -8.663, -25.974,
                 -31.891, 52.946, -3.606, 0.066, -0.444, 187.845, -43.182, -76.494, 86.116, -44.961, -0.852,
                 -32.907, -33.932, -30.160, -7.765, 3.445, 41.910, 10.141, 36.734, 49.313, -44.007),
    },
}
HOLD_MARGIN = 0.0  # points by which holding must beat the meld


def table(v: SeatView) -> str:
    """The kind of game a set of weights was fit for: partners racing to the one canasta that
    lets a side go out (``finnish``, ``classic``, ``bicycle``, ``wiki``), or any other."""
    rules = v.rules
    if rules.team_size > 1 and rules.going_out.canastas_to_go_out == 1:
        return "partners, one canasta"
    return "other"


def discard_features(bot: Standard, v: SeatView, kind: int) -> list[float]:
    """What a seat sees of discarding ``kind`` (the next seat is an opponent)."""
    unseen = v.unseen_counts()
    nxt = v.next_opponent()
    assert nxt is not None
    their_team = v.team_of(nxt)
    natural = not IS_WILD[kind] and not IS_BLACK_THREE[kind]
    rank = RANK_OF[kind]
    copies = v.hand_rank_counts()[rank] if natural else 0
    ours = v.melds(v.team)[rank] if natural else None
    theirs = v.melds(their_team)[rank] if natural else None
    take = take_chance_known(v, nxt, rank, unseen) if natural else 0.0
    return [
        bot.discard_score(v, kind, unseen),
        bot.danger(v, kind, unseen) if natural else 0.0,
        take,
        take * v.pile_size,
        take if theirs is not None else 0.0,
        take if not v.opened(their_team) else 0.0,
        1.0 if natural and take == 0.0 else 0.0,
        float(VALUE[kind]),
        1.0 if copies == 1 else 0.0,
        1.0 if copies == 2 else 0.0,
        1.0 if copies >= 3 else 0.0,
        1.0 if ours is not None else 0.0,
        1.0 if ours is not None and len(ours.cards) >= NEAR_CANASTA else 0.0,
        1.0 if theirs is not None else 0.0,
        1.0 if theirs is not None and len(theirs.cards) >= NEAR_CANASTA else 0.0,
        float(sum(1 for k in v.pile if RANK_OF[k] == rank)) if natural else 0.0,
        1.0 if IS_BLACK_THREE[kind] else 0.0,
        1.0 if IS_WILD[kind] else 0.0,
    ]


def hold_features(bot: Standard, v: SeatView, meld: Action, kind: int) -> list[float]:
    """What a seat sees of keeping ``meld``'s cards in hand and discarding ``kind`` instead."""
    if meld["type"] == "meld":
        cards = [parse_card(c) for group in meld["melds"] for c in group]
    else:
        cards = [parse_card(c) for c in meld["cards"]]
    nxt = v.next_opponent()
    assert nxt is not None
    return [
        1.0,
        float(v.pile_size),
        v.stock_size / STOCK_FULL,
        1.0 if v.opened(v.team) else 0.0,
        float(v.hand_size),
        float(len(cards)),
        float(sum(1 for k in cards if IS_WILD[k])),
        1.0 if bot.completes_canasta(v, meld) else 0.0,
        1.0 if meld["type"] == "add" else 0.0,
        float(v.canastas(v.team)),
        float(max(v.canastas(t) for t in range(v.teams) if t != v.team)),
        1.0 if bot.threat(v) else 0.0,
        1.0 if v.opened(v.team_of(nxt)) else 0.0,
        float(v.pile_size) if v.pile_frozen_by != NOT_FROZEN else 0.0,
        *discard_features(bot, v, kind),
    ]


def dot(weights: tuple[float, ...], features: list[float]) -> float:
    return sum(w * f for w, f in zip(weights, features, strict=True))


def judge(bot: Standard, v: SeatView, candidates: list[Action]) -> Action | None:
    """The model's choice among the expert's ``candidates`` (the bot's own first), or None
    where no model applies: no weights for this table, a candidate that is neither the bot's
    meld nor a discard (going out, the draw phase), or a partner next to play."""
    weights = WEIGHTS.get(table(v))
    if weights is None or v.next_opponent() is None or len(candidates) < 2:
        return None
    first, rest = candidates[0], candidates[1:]
    if any(a["type"] != "discard" for a in rest):
        return None
    if first["type"] == "discard":
        scores = [dot(weights["discard"], discard_features(bot, v, parse_card(a["card"]))) for a in candidates]
        best = max(range(len(candidates)), key=lambda i: (scores[i], i == 0))
        return candidates[best]
    if first["type"] in ("meld", "add"):
        gains = [dot(weights["hold"], hold_features(bot, v, first, parse_card(a["card"]))) for a in rest]
        best = max(range(len(rest)), key=lambda i: gains[i])
        return rest[best] if gains[best] > HOLD_MARGIN else first
    return None


# -- sampling and fitting (offline) -------------------------------------------------------
SAMPLE_RATE = 0.15  # of the play-phase decisions of a game
WORLDS = 20  # rollouts to the hand's end per candidate of a sampled decision
HAND_END = 10**6  # a rollout horizon and step cap that only the hand's end reaches
MIN_WORLDS = 10  # a decision whose candidates were all legal in fewer worlds is dropped
RIDGE = 10.0
FOLDS = 5


def sample(preset: str, games: range, worlds: int, out: Any) -> None:
    """Write one JSON line per sampled decision of standard self-play: the seat's view as a
    state (only its features are read back), the candidates, and each candidate's hand-end
    score difference in each of ``worlds`` sampled worlds (None where it was illegal)."""
    from bots.expert import Expert
    from engine.rules import resolve

    rules = resolve(preset)
    deep = Expert(rollout=Standard(), horizon=HAND_END, max_steps=HAND_END)
    for game in games:
        _sample_game(rules, game, worlds, deep, out)


def _sample_game(rules: Any, game: int, worlds: int, deep: Any, out: Any) -> None:
    """One game of :func:`sample` (its deal and its sampling seeded by ``game``)."""
    import orjson

    from bots import policy
    from bots.simulate import play_game
    from bots.view import determinize

    rng = random.Random(game)
    player = policy("standard", random.Random(game + 1))

    def watch(state: Any, seat: int, actions: list[Action]) -> Action:
        choice = player(state, seat, actions)
        if len(actions) < 2 or state.phase != "play" or rng.random() >= SAMPLE_RATE:
            return choice
        v = SeatView(state, seat)
        r = random.Random(rng.getrandbits(32))
        candidates = deep.candidates(v, actions, deep.greedy.choose(v, actions, r))
        if len(candidates) < 2 or any(a["type"] != "discard" for a in candidates[1:]):
            return choice
        if candidates[0]["type"] not in CANDIDATE_TYPES:
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


def _decisions(lines: list[dict[str, Any]], kind: str) -> list[tuple[int, list[list[float]], list[float]]]:
    """(game, features per candidate row, target per row) for one model, from sampled lines.
    Discard rows are centred on the decision's means; hold rows are each discard against the meld."""
    from engine.state import State

    bot = Standard()
    out = []
    for line in lines:
        candidates, values = line["candidates"], line["values"]
        first = candidates[0]["type"]
        if (kind == "discard") != (first == "discard"):
            continue
        worlds = [w for w in range(len(values[0])) if all(v[w] is not None for v in values)]
        if len(worlds) < MIN_WORLDS:
            continue
        means = [sum(v[w] for w in worlds) / len(worlds) for v in values]
        v = SeatView(State.from_json(line["state"]), line["seat"])
        if v.next_opponent() is None:
            continue
        if kind == "discard":
            rows = [discard_features(bot, v, parse_card(a["card"])) for a in candidates]
            centre = [sum(col) / len(col) for col in zip(*rows, strict=True)]
            rows = [[x - c for x, c in zip(row, centre, strict=True)] for row in rows]
            mean = sum(means) / len(means)
            targets = [m - mean for m in means]
        else:
            rows = [hold_features(bot, v, candidates[0], parse_card(a["card"])) for a in candidates[1:]]
            targets = [m - means[0] for m in means[1:]]
        out.append((line["game"], rows, targets))
    return out


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
        w = _solve(train)
        for _, rows, targets in (d for d in data if d[0] in held):
            scores = [sum(a * b for a, b in zip(w, row, strict=True)) for row in rows]
            if kind == "discard":
                best = max(range(len(rows)), key=lambda i: (scores[i], i == 0))
                gains.append(targets[best] - targets[0])
            else:
                best = max(range(len(rows)), key=lambda i: scores[i])
                gains.append(targets[best] if scores[best] > HOLD_MARGIN else 0.0)
    if len(gains) < 2:
        return _solve(data), 0.0, math.inf  # too few games to hold any out
    mean = sum(gains) / len(gains)
    margin = 1.96 * math.sqrt(sum((g - mean) ** 2 for g in gains) / (len(gains) - 1) / len(gains))
    return _solve(data), mean, margin


def _solve(data: list[tuple[int, list[list[float]], list[float]]]) -> list[float]:
    xs = [row for _, rows, _ in data for row in rows]
    ys = [t for _, _, targets in data for t in targets]
    return least_squares(xs, ys, RIDGE)


def main(argv: list[str]) -> int:
    import orjson

    if len(argv) == 5 and argv[0] == "sample":
        preset, first, last, path = argv[1], int(argv[2]), int(argv[3]), argv[4]
        with open(path, "ab") as out:
            sample(preset, range(first, last), WORLDS, out)
        return 0
    if len(argv) >= 2 and argv[0] == "fit":
        lines = [orjson.loads(raw) for path in argv[1:] for raw in open(path, "rb")]
        for kind in ("discard", "hold"):
            w, gain, margin = fit(lines, kind)
            print(f"{kind}: held-out gain {gain:+.2f} +/- {margin:.2f} points a decision")
            print("(" + ", ".join(f"{x:.3f}" for x in w) + ")")
        return 0
    print("usage: python -m bots.distilled sample PRESET FIRST_GAME LAST_GAME FILE | fit FILE...", file=sys.stderr)
    return 2



if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
