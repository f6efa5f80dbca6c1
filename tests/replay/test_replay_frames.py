"""replay.frames: a log as the sequence of its positions (what POST /replay answers)."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

import engine
from bots.simulate import play_game
from cli.engine_cmds import random_policy
from engine.cards import CODES, hand_codes
from replay.frames import BadLog, frames_of
from replay.log import encode_log


def _game(preset: str = "finnish", seed: int = 3, target: int = 1000) -> tuple[list[dict[str, Any]], engine.State]:
    rules = engine.resolve(preset, None, {"target_score": target})
    record = play_game(rules, random.Random(seed), random_policy(random.Random(seed)))
    assert record.final is not None
    return record.log_lines("g-frames-test"), record.final


def _positions(lines: list[dict[str, Any]]) -> list[engine.State]:
    """The state after every deal and move, rebuilt with the engine alone."""
    state = engine.new_game(engine.RuleOptions.from_dict(lines[0]["rules"]))
    out = []
    for line in lines[1:]:
        if "deal" in line:
            state = engine.deal(state, line["deck"], line["salt"], line["commitment"])
            out.append(state)
        elif "move" in line:
            state = engine.apply(state, line["seat"], line["action"])
            out.append(state)
    return out


@pytest.mark.parametrize("preset", ["finnish", "classic", "norwegian", "finnish-3p"])
def test_one_frame_per_deal_and_move_showing_the_engines_position(preset: str) -> None:
    lines, final = _game(preset)
    frames = frames_of(encode_log(lines))
    positions = _positions(lines)
    assert frames.finished
    assert len(frames.frames) == len(positions) == sum(1 for line in lines if "deal" in line or "move" in line)
    for frame, state in zip(frames.frames, positions, strict=True):
        assert frame["view"] == engine.spectator_view(state)
        assert frame["hands"] == [hand_codes(h) for h in state.hands]
        assert frame["move"] == state.moves and frame["hand"] == state.hand_no
    last = frames.frames[-1]
    assert last["view"]["phase"] == "over" and last["view"]["result"] == final.game_result
    moves = [line for line in lines if "move" in line]
    move_frames = [f for f in frames.frames if f["kind"] == "move"]
    assert [(f["seat"], f["action"]) for f in move_frames] == [(m["seat"], m["action"]) for m in moves]
    assert all(f["event"]["seat"] == f["seat"] and f["event"]["move"] == f["move"] for f in move_frames)
    assert orjson.loads(orjson.dumps(frames.to_json()))["header"]["rules"] == lines[0]["rules"]


def test_the_header_keeps_only_its_public_facts() -> None:
    lines, _ = _game()
    lines[0]["seats"][1]["token"] = "not-for-anyone"  # a field the format does not define
    lines[0]["extra"] = {"secret": 1}
    header = frames_of(encode_log(lines)).header
    assert set(header) == {"game", "preset", "created", "players", "seats", "rules"}
    assert all(set(s) == {"seat", "team", "name", "bot"} for s in header["seats"])
    assert header["game"] == "g-frames-test" and header["players"] == 4


def test_an_unfinished_log_replays_as_far_as_it_goes() -> None:
    lines, _ = _game()
    cut = [line for line in lines if "game_end" not in line and "hand_end" not in line][:30]
    frames = frames_of(encode_log(cut))
    assert not frames.finished
    assert len(frames.frames) == sum(1 for line in cut if "deal" in line or "move" in line)


def _bad(data: bytes, **kwargs: Any) -> BadLog:
    with pytest.raises(BadLog) as info:
        frames_of(data, **kwargs)
    return info.value


def test_bad_logs_name_the_reason_and_the_line() -> None:
    lines, _ = _game()
    good = encode_log(lines)
    assert _bad(b"").code == "missing_header"
    err = _bad(good + b"{not json\n")
    assert err.code == "not_json" and err.line == len(lines) + 1
    assert _bad(b'{"log": "canasta-log/9"}\n').code == "unsupported_version"
    assert _bad(encode_log([{**lines[0], "preset": "nonesuch"}, *lines[1:]])).code == "invalid_rules"
    # a discard of a card the seat does not hold: the engine's own reason code
    broken = [dict(line) for line in lines]
    at = next(i for i, line in enumerate(broken) if line.get("action", {}).get("type") == "discard")
    hand = _positions(lines[:at])[-1].hands[broken[at]["seat"]]
    missing = next(code for code in CODES if code not in hand_codes(hand))
    broken[at] = {**broken[at], "action": {"type": "discard", "card": missing}}
    err = _bad(encode_log(broken))
    assert err.code == "cards_not_in_hand" and err.line == at + 1 and err.move == broken[at]["move"]
    assert f"line {at + 1} (move {broken[at]['move']})" in err.describe()


def test_a_log_longer_than_the_limit_is_refused_before_replaying() -> None:
    lines, _ = _game()
    moves = sum(1 for line in lines if "move" in line)
    err = _bad(encode_log(lines), max_moves=moves - 1)
    assert err.code == "log_too_long" and str(moves) in err.message
    assert frames_of(encode_log(lines), max_moves=moves).finished
