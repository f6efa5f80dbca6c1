"""`canasta replay show`: the position after a move, as text."""

from __future__ import annotations

import copy

from replay_corpus import encode
from replay_handmade import quick_game

import engine
from engine.cards import hand_codes
from replay.cli import main
from replay.reader import parse_bytes
from replay.validate import replay_log
from tests.positions import WILD_BESIDE, played


def test_show_the_end_of_a_hand_written_game(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(quick_game()))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "game over: team 1 wins" in out
    assert "hand 1 ended: went_out by seat 1" in out
    assert "meld A: AS AS AH AH AD AD AC  [canasta (natural), 0 wilds]" in out
    assert "Ann" in out and "Bo" in out


def test_show_after_a_move_matches_the_engine(tmp_path, capsys, sample_logs):
    lines = sample_logs[3]
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(lines))
    rep = replay_log(parse_bytes(encode(lines)), until_move=25)
    st = rep.state
    assert rep.last_move == 25 and st.moves == 25
    assert main(["show", str(path), "--move", "25"]) == 0
    out = capsys.readouterr().out
    assert "after move 25" in out
    assert f"to act: seat {st.to_act} " in out
    for seat in range(st.players):
        assert " ".join(hand_codes(st.hands[seat])) in out
    assert f"stock: {st.stock_size} cards" in out
    assert f"pile: {len(st.pile)} cards" in out


def test_show_one_seat(tmp_path, capsys, sample_logs):
    lines = sample_logs[3]
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(lines))
    rep = replay_log(parse_bytes(encode(lines)), until_move=10)
    seat = rep.state.to_act
    assert main(["show", str(path), "--move", "10", "--seat", str(seat)]) == 0
    out = capsys.readouterr().out
    view = engine.seat_view(rep.state, seat)
    assert " ".join(view["hand"]) in out
    assert "other hands:" in out and "may: " in out
    others = [p for p in range(rep.state.players) if p != seat]
    for p in others:  # the other hands are not shown
        hand = " ".join(hand_codes(rep.state.hands[p]))
        assert hand not in out or hand == " ".join(view["hand"])


def test_show_move_zero_and_beyond_the_end(tmp_path, capsys, sample_logs):
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(sample_logs[0]))
    assert main(["show", str(path), "--move", "0"]) == 0
    assert "after move 0" in capsys.readouterr().out
    assert main(["show", str(path), "--move", "999999"]) == 2
    assert "not move 999999" in capsys.readouterr().err
    assert main(["show", str(path), "--seat", "9"]) == 2
    capsys.readouterr()


def test_show_an_invalid_log_stops_before_the_bad_line(tmp_path, capsys, sample_logs):
    lines = copy.deepcopy(sample_logs[0])
    i = [i for i, line in enumerate(lines) if "move" in line][5]
    lines[i]["seat"] = (lines[i]["seat"] + 1) % len(lines[0]["seats"])
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(lines))
    assert main(["show", str(path)]) == 1
    captured = capsys.readouterr()
    assert "not_your_turn" in captured.err
    assert f"after move {lines[i]['move'] - 1}" in captured.out  # the position before it


def test_show_unreadable(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"\xff\xfe")
    assert main(["show", str(path)]) == 2
    assert "not_utf8" in capsys.readouterr().err


def test_show_what_every_player_could_remember(tmp_path, capsys):
    """The pile's cards in order, the wilds beside it (norwegian, R13) and, for one seat, the
    cards the others were seen to take with the pile: public, as the service's views say."""
    state, lines = played(*WILD_BESIDE)
    path = tmp_path / "g.jsonl"
    path.write_bytes(encode(lines))
    seat = state.to_act
    assert main(["show", str(path), "--move", str(state.moves), "--seat", str(seat)]) == 0
    out = capsys.readouterr().out
    assert "pile: 3 cards, top 6C, beside it 2H, frozen by 2H beside the pile" in out
    assert "pile cards, bottom first: 3C 8H 6C" in out
    view = engine.seat_view(state, seat)
    known = [(p, codes) for p, codes in enumerate(view["known_from_pile"]) if codes and p != seat]
    assert known
    for p, codes in known:
        assert f"seat {p}: {view['hand_sizes'][p]} (known: {' '.join(codes)})" in out
