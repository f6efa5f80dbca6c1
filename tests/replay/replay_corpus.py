"""Simulated game logs and one-change mutations of them, for the replay tests.

Each mutation returns the mutated lines and what the validator may answer: an exact line
and the reason codes that fit, or "valid" where the change cannot break the log. The
expectations are derived from the engine's order of checks (engine/moves.py) and the
validator's (replay/validate.py), and are as narrow as that order allows.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from bots.simulate import play_game
from cli.engine_cmds import random_policy
from engine.cards import CODES, IS_BLACK_THREE, IS_RED_THREE, IS_WILD, RANK_OF, WILDS, parse_card
from replay.log import deal_line, encode_log, game_end_line, hand_end_line, header_line, move_line
from replay.validate import rules_from_header

ROOT = Path(__file__).resolve().parents[2]

# every preset with every player count it is played by
CONFIGS: list[tuple[str, int | None]] = [
    ("finnish", None), ("finnish-2p", None), ("finnish-3p", None), ("classic", None), ("bicycle", None),
    ("wiki", 2), ("wiki", 3), ("wiki", 4), ("wiki", 6),
    ("norwegian", 2), ("norwegian", 4), ("norwegian", 5), ("norwegian", 6),
]


def config_id(config: tuple[str, int | None]) -> str:
    preset, players = config
    return preset if players is None else f"{preset}-{players}"


def engine_codes() -> set[str]:
    """The engine's documented move reason codes (docs/reason-codes.md)."""
    text = (ROOT / "docs/reason-codes.md").read_text()
    return set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))


def simulate(preset: str, players: int | None, seed: int, target_score: int | None = None) -> list[dict[str, Any]]:
    """One random game's log lines (a header first). ``target_score`` keeps random games short."""
    overrides = {"target_score": target_score} if target_score else {}
    rules = engine.resolve(preset, players, overrides)
    rng = random.Random(f"replay-tests:{preset}:{players}:{seed}")
    record = play_game(rules, rng, random_policy(rng))
    return record.log_lines(game_id=f"{preset}-{players}-{seed}")


def limited(preset: str, players: int | None, seed: int, **limits: int) -> list[dict[str, Any]]:
    """One random game's log lines, the game played with ``limits`` lowered (a house rule):
    ``max_hands=2`` ends it after its second hand, unless a side reaches the target first."""
    rules = engine.resolve(preset, players, dict(limits))
    rng = random.Random(f"replay-tests:limited:{preset}:{players}:{seed}")
    return play_game(rules, rng, random_policy(rng)).log_lines(game_id=f"{preset}-{players}-{seed}-limited")


def unlimited(preset: str, players: int | None, seed: int, hands: int) -> list[dict[str, Any]]:
    """A log as the service wrote it before games had limits: the header's rules carry none,
    the game end (if any) no reason. Random play without limits, until ``hands`` hands have
    been played or the game ends."""
    rules = engine.resolve(preset, players).with_values({"max_hands": None, "max_moves_per_hand": None})
    rng = random.Random(f"replay-tests:unlimited:{preset}:{players}:{seed}")
    play = random_policy(rng)
    state = engine.new_game(rules)
    lines = [header_line(rules, game_id=f"{preset}-{players}-{seed}-old")]
    for name in ("max_hands", "max_moves_per_hand"):
        del lines[0]["rules"][name]
    while state.phase != "over" and (state.hand_no < hands or state.phase != "deal"):
        if state.phase == "deal":
            deck, salt, digest = engine.shuffle(rules, rng)
            state = engine.deal(state, deck, salt)
            lines.append(deal_line(state.hand_no, state.dealer, deck, salt, digest))
            continue
        seat, hand = state.to_act, state.hand_no
        action = play(state, seat, engine.legal_actions(state, seat))
        state = engine.apply(state, seat, action)
        lines.append(move_line(state.moves, hand, seat, action))
        if state.phase in ("deal", "over"):
            lines.append(hand_end_line(state.hand_result))
    if state.phase == "over":
        end = game_end_line(state.game_result)
        del end["reason"]
        lines.append(end)
    return lines


def corpus(games: int, target_score: int | None, seed0: int = 0) -> dict[str, list[list[dict[str, Any]]]]:
    return {
        config_id(c): [simulate(c[0], c[1], seed0 + g, target_score) for g in range(games)] for c in CONFIGS
    }


def encode(lines: list[dict[str, Any]]) -> bytes:
    return encode_log(lines)


# -- mutations -------------------------------------------------------------------------------


@dataclass
class Expect:
    """What the validator may say about a mutated log."""

    what: str  # a description for assertion messages
    lines: tuple[int, ...] = ()  # the 1-based lines where the first violation may be
    codes: frozenset[str] = frozenset()  # the codes that fit (empty: only `valid` fits)
    valid_ok: bool = False  # the change may leave the log valid
    finished: bool | None = None  # when valid: whether the game must read as finished
    status: str = "invalid"

    def check(self, result: Any) -> None:
        first = result.violations[0] if result.violations else None
        said = f"{self.what}: got {result.status} {first.describe(result.file) if first else ''}"
        if result.valid:
            assert self.valid_ok, said
            if self.finished is not None:
                assert result.finished == self.finished, said
            return
        assert self.codes, said
        assert result.status == self.status, said
        assert first is not None and first.code in self.codes, said
        assert first.line in self.lines, said


def _states_before(lines: list[dict[str, Any]]) -> list[engine.State | None]:
    """The engine state before each line (index = line index), rebuilt from a valid log."""
    rules = rules_from_header(lines[0])
    out: list[engine.State | None] = [None]
    st: engine.State | None = None
    for line in lines[1:]:
        out.append(st)
        if "deal" in line:
            st = engine.deal(st or engine.new_game(rules, line["dealer"]), line["deck"], line["salt"], line["commitment"])
        elif "move" in line:
            st = engine.apply(st, line["seat"], line["action"])
    return out


def _indexes(lines: list[dict[str, Any]], key: str) -> list[int]:
    return [i for i, line in enumerate(lines) if key in line]


def _absent_twin(card: str, hand: tuple[int, ...]) -> str | None:
    """A card that plays the same part as ``card`` (same rank, or wild for wild) and that the hand lacks."""
    kind = parse_card(card)
    if IS_WILD[kind]:
        pool = list(WILDS)
    elif IS_BLACK_THREE[kind]:
        pool = [k for k in range(52) if IS_BLACK_THREE[k]]
    else:
        pool = [k for k in range(52) if RANK_OF[k] == RANK_OF[kind] and not IS_RED_THREE[k]]
    for k in pool:
        if k != kind and hand[k] == 0:
            return CODES[k]
    return None


def _card_slots(action: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(container, index) of each card an action names (not single red-three lays)."""
    slots: list[tuple[Any, Any]] = []
    t = action["type"]
    if t == "discard":
        slots.append((action, "card"))
    if t == "add":
        slots += [(action["cards"], i) for i in range(len(action["cards"]))]
    if t == "take_pile" and "with" in action:
        slots += [(action["with"], i) for i in range(len(action["with"]))]
    for group in action.get("melds", []) if t in ("meld", "take_pile") else []:
        if len(group) == 1 and group[0] in ("3H", "3D"):
            continue
        slots += [(group, i) for i in range(len(group))]
    return slots


def mutate_card_absent(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect] | None:
    """A card of an action replaced by one of the same part that the player does not hold."""
    states = _states_before(lines)
    candidates = _indexes(lines, "move")
    rng.shuffle(candidates)
    for i in candidates:
        st = states[i]
        out = copy.deepcopy(lines)
        slots = _card_slots(out[i]["action"])
        if not slots or st is None:
            continue
        holder, key = rng.choice(slots)
        twin = _absent_twin(holder[key], st.hands[out[i]["seat"]])
        if twin is None:
            continue
        holder[key] = twin
        return out, Expect(f"line {i + 1}: a card the player lacks ({twin})", (i + 1,), frozenset({"cards_not_in_hand"}))
    return None


def mutate_card_code(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect] | None:
    """A card of an action replaced by text that is no card."""
    out = copy.deepcopy(lines)
    candidates = [i for i in _indexes(out, "move") if _card_slots(out[i]["action"])]
    if not candidates:
        return None
    i = rng.choice(candidates)
    holder, key = rng.choice(_card_slots(out[i]["action"]))
    holder[key] = rng.choice(["XX", "1S", "10H", "jk", ""])
    return out, Expect(f"line {i + 1}: not a card code", (i + 1,), frozenset({"invalid_card"}))


def mutate_seat(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect] | None:
    """A move made by another seat than the one to act: always ``not_your_turn`` (an answer
    out of turn too; ``awaiting_answer`` needs a non-answer move while an answer is due,
    which a recorded legal move never is)."""
    out = copy.deepcopy(lines)
    players = len(out[0]["seats"])
    i = rng.choice(_indexes(out, "move"))
    out[i]["seat"] = rng.choice([p for p in range(players) if p != out[i]["seat"]])
    return out, Expect(f"line {i + 1}: another seat", (i + 1,), frozenset({"not_your_turn"}))


def mutate_seat_out_of_range(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "move"))
    out[i]["seat"] = rng.choice([-1, len(out[0]["seats"]), 99])
    return out, Expect(f"line {i + 1}: no such seat", (i + 1,), frozenset({"invalid_seat"}))


def mutate_score(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "hand_end"))
    row = rng.choice(out[i]["scores"])
    field = rng.choice(["melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand", "hand_total",
                        "total"])
    row[field] += rng.choice([-100, -5, 5, 20, 300])
    return out, Expect(f"line {i + 1}: team {row['team']} {field}", (i + 1,), frozenset({"score_mismatch"}))


def mutate_hand_end(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "hand_end"))
    what = rng.choice(["reason", "by", "number"])
    if what == "reason":
        out[i]["reason"] = next(r for r in ("went_out", "stock_exhausted", "red_three_last") if r != out[i]["reason"])
    elif what == "by":
        out[i]["by"] = (out[i]["by"] + 1) % len(out[0]["seats"])
    else:
        out[i]["hand_end"] += 1
    return out, Expect(f"line {i + 1}: hand_end {what}", (i + 1,), frozenset({"hand_end_mismatch"}))


def mutate_game_end(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    out = copy.deepcopy(lines)
    end = out[-1]
    if rng.random() < 0.5:
        t = rng.randrange(len(end["totals"]))
        end["totals"][t] += 10
    else:
        end["winner"] = None if end["winner"] is not None else 0
    return out, Expect("the game_end line", (len(out),), frozenset({"game_end_mismatch"}))


def mutate_deck_swap(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    """Two different cards of a deck swapped: still the pack, but not the committed order."""
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "deal"))
    deck = out[i]["deck"]
    while True:
        a, b = rng.randrange(len(deck)), rng.randrange(len(deck))
        if deck[a] != deck[b]:
            break
    deck[a], deck[b] = deck[b], deck[a]
    return out, Expect(f"line {i + 1}: deck swap", (i + 1,), frozenset({"commitment_mismatch"}))


def mutate_deck_replace(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    """A card of a deck replaced by another: no longer the pack (checked before the commitment)."""
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "deal"))
    deck = out[i]["deck"]
    a = rng.randrange(len(deck))
    deck[a] = rng.choice([c for c in CODES if c != deck[a]] + ["ZZ"])
    return out, Expect(f"line {i + 1}: deck card replaced", (i + 1,), frozenset({"invalid_deck"}))


def mutate_commitment(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    out = copy.deepcopy(lines)
    i = rng.choice(_indexes(out, "deal"))
    field = rng.choice(["commitment", "salt"])
    text = out[i][field]
    pos = rng.randrange(len(text))
    out[i][field] = text[:pos] + ("0" if text[pos] != "0" else "1") + text[pos + 1:]
    return out, Expect(f"line {i + 1}: {field} changed", (i + 1,), frozenset({"commitment_mismatch"}))


def mutate_drop(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect]:
    """One line left out; what the validator must say depends on the kind of line dropped."""
    out = copy.deepcopy(lines)
    i = rng.randrange(len(out))
    dropped = out.pop(i)
    no = i + 1  # the line that took its place
    if i == 0:
        return out, Expect("the header dropped", (1,), frozenset({"missing_header"}), status="unreadable")
    if "game_end" in dropped:
        return out, Expect("the game_end line dropped", valid_ok=True, finished=False)
    after = out[i]  # every dropped line but game_end has a successor in a finished log
    if "move" in dropped:
        code = "move_number_mismatch" if "move" in after else "hand_not_ended"
        return out, Expect(f"line {no}: move {dropped['move']} dropped", (no,), frozenset({code}))
    if "deal" in dropped:
        return out, Expect(f"line {no}: deal {dropped['deal']} dropped", (no,), frozenset({"hand_not_started"}))
    assert "hand_end" in dropped
    return out, Expect(f"line {no}: hand_end {dropped['hand_end']} dropped", (no,), frozenset({"missing_hand_end"}))


def mutate_swap_lines(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect] | None:
    """Two neighbouring move lines swapped whole: the numbering breaks at the first."""
    out = copy.deepcopy(lines)
    pairs = [i for i in _indexes(out, "move") if i + 1 < len(out) and "move" in out[i + 1]]
    if not pairs:
        return None
    i = rng.choice(pairs)
    out[i], out[i + 1] = out[i + 1], out[i]
    return out, Expect(f"line {i + 1}: moves swapped", (i + 1,), frozenset({"move_number_mismatch"}))


def mutate_swap_moves(lines: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], Expect] | None:
    """The seats and actions of two neighbouring moves swapped, numbers kept.

    The first move made second (or the second made first) breaks at one of the two lines,
    with an engine code (or ``hand_already_ended``), except where one seat lays two melds/adds in a row: those commute
    and leave the same position, so the log may stay valid.
    """
    out = copy.deepcopy(lines)
    pairs = [i for i in _indexes(out, "move") if i + 1 < len(out) and "move" in out[i + 1]
             and (out[i]["seat"], out[i]["action"]) != (out[i + 1]["seat"], out[i + 1]["action"])]
    if not pairs:
        return None
    i = rng.choice(pairs)
    a, b = out[i], out[i + 1]
    a["seat"], b["seat"] = b["seat"], a["seat"]
    a["action"], b["action"] = b["action"], a["action"]
    commute = a["seat"] == b["seat"] and {a["action"]["type"], b["action"]["type"]} <= {"meld", "add"}
    # hand_already_ended: the move made first ends the hand (a discard whose next turn finds
    # the stock empty under stock_out "end"), so the other one comes too late
    codes = frozenset(engine_codes() | {"hand_already_ended"})
    return out, Expect(f"lines {i + 1}-{i + 2}: moves swapped", (i + 1, i + 2), codes, valid_ok=commute)


MUTATIONS = [
    mutate_card_absent, mutate_card_code, mutate_seat, mutate_seat_out_of_range, mutate_score, mutate_hand_end,
    mutate_game_end, mutate_deck_swap, mutate_deck_replace, mutate_commitment, mutate_drop, mutate_swap_lines,
    mutate_swap_moves,
]

