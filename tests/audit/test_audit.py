"""The fair-play audit: calibrated on fair play (coarsely), flags a blatant cheater in a short
set, never flags a short log, and refuses bad logs with one clear line. The long calibration
is `canasta bench audit` (BENCHMARKS.md)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from audit import cli
from audit.deals import hands_dealt_again, stock_shuffled
from audit.decisions import Refused, game_of, read_game
from audit.fairplay import Evidence, audit
from audit.judge import Judge
from bench.audit import play_set
from bench.cheaters import Cheater, Deliberate, feeds, leaked_world, told
from bots import policy
from bots.simulate import play_game
from bots.view import SeatView, holds_no_red_three
from engine.cards import IS_RED_THREE
from engine.legal import legal_actions
from engine.rules import resolve
from replay.reader import parse_bytes

RULES = resolve("finnish")


def log_bytes(seed: int, suspect=None) -> bytes:
    """A four-player game of standard bots (seat 0: ``suspect``'s policy, if given)."""
    others = policy("standard", random.Random(seed))
    seats = {p: others for p in range(4)}
    if suspect is not None:
        seats[0] = suspect
    record = play_game(RULES, random.Random(1000 + seed), seats)
    return b"".join(orjson.dumps(line) + b"\n" for line in record.log_lines(game_id=f"g{seed}"))


def decisions(seed: int, suspect=None, seat: int = 0):
    game = game_of(parse_bytes(log_bytes(seed, suspect)), f"g{seed}")
    return game.name, game.of_seat(seat)


def test_ranks_are_uniform_ish_on_fair_play():
    """Fair seats' per-decision ranks, of both tests, spread evenly over (0, 1): their mean near
    1/2 and every quarter holding its share (a sampler that told the true deal apart would
    skew them)."""
    judge = Judge(worlds=7)
    deal, stock = [], []
    for seed, who in ((1, "random"), (2, "greedy"), (3, "random")):
        name, ds = decisions(seed, policy(who, random.Random(seed)))
        for d in ds:
            j = judge.judge(d, random.Random(d.move))
            if j is not None and j.spread > 0:
                deal.append(j.u)
            if j is not None and j.spread_stock > 0:
                stock.append(j.u_stock)
    for us in (deal, stock):
        assert len(us) >= 120
        mean = sum(us) / len(us)
        assert abs(mean - 0.5) < 4 * (1 / 12) ** 0.5 / len(us) ** 0.5  # four standard errors
        for q in range(4):
            share = sum(1 for u in us if q / 4 <= u < (q + 1) / 4) / len(us)
            assert 0.13 < share < 0.37, (q, share)


def test_all_seeing_cheater_is_flagged_in_a_short_set():
    cheater = Cheater("all", worlds=4)
    games = [decisions(seed, cheater.policy(random.Random(seed))) for seed in range(6)]
    verdict = audit("cheater", games, Judge(worlds=7))
    assert verdict.judgeable
    assert verdict.flagged, verdict.to_dict()


def test_a_cheater_who_uses_the_next_opponents_hand_as_a_person_would_is_flagged_in_a_set():
    """Not blatant: the standard bot's play but where the next opponent's hand changes its
    judgment (about a quarter of its decisions), judged with the benchmark's own settings over
    one set of 20 games (39 of 40 such sets are flagged: BENCHMARKS.md)."""
    row = play_set("deliberate-opponent", 0, seed=5)
    assert row["judgeable"] and row["flagged"], row


def test_a_single_hand_is_too_short_to_judge_and_never_flagged():
    name, ds = decisions(7, Cheater("all", worlds=2).policy(random.Random(7)))
    first_hand = [d for d in ds if d.hand == 1][:20]
    verdict = audit("short", [(name, first_hand)], Judge(worlds=3))
    assert not verdict.judgeable and not verdict.flagged
    assert verdict.status == "too short to judge"


def test_leaks_put_the_true_cards_in_the_world():
    """The cheaters see what they claim: the partner's / next opponent's hand, the next card."""
    name, ds = decisions(4)
    d = next(x for x in ds if x.state.stock_size > 5)
    s, rng = d.state, random.Random(0)
    assert leaked_world(s, 0, "partner", rng).hands[2] == s.hands[2]
    assert leaked_world(s, 0, "opponent", rng).hands[1] == s.hands[1]
    assert all(leaked_world(s, 0, "all", rng).hands[p] == s.hands[p] for p in range(4))
    assert leaked_world(s, 0, "stock", rng).deck[0] == s.deck[s.stock_pos]


def test_the_deliberate_cheaters_read_the_leaked_hand_as_cards_the_table_knows():
    """The leak comes in through the view's door for known cards: the leaked seat's cards are
    no longer unseen, and nobody else's hand is told."""
    d = next(x for x in decisions(4)[1] if x.state.stock_size > 5)
    s = d.state
    for leak, shown in (("partner", 2), ("opponent", 1)):
        t = told(s, 0, leak)
        assert sorted(t.known_from_pile[shown]) == sorted(k for k, n in enumerate(s.hands[shown]) for _ in range(n))
        assert all(t.known_from_pile[p] == (s.known_from_pile[p] if s.known_from_pile else ()) for p in (1, 2, 3)
                   if p != shown)
        fair, cheat = SeatView(s, 0).unseen_counts(), SeatView(t, 0).unseen_counts()
        assert sum(fair) - sum(cheat) == sum(s.hands[shown]) - len(s.known_from_pile[shown] if s.known_from_pile else ())


def test_the_deliberate_cheaters_use_their_leak():
    """(b) and (c) as a person plays them: each departs from the standard bot where the leaked
    hand changes its judgment; (c) never discards a card that lets the next opponent take
    the pile when another discard would not."""
    standard = policy("standard", random.Random(3))
    departed = {"partner": 0, "opponent": 0}
    judged = 0
    for seed in range(3):
        for d in decisions(seed)[1]:
            actions = legal_actions(d.state, 0)
            if len(actions) < 2:
                continue
            judged += 1
            book = standard(d.state, 0, actions)
            for leak in departed:
                mine = Deliberate(leak).play(d.state, 0, actions, random.Random(seed))
                departed[leak] += mine != book
                if leak == "opponent" and mine["type"] == "discard" and feeds(d.state, 0, mine):
                    assert all(feeds(d.state, 0, a) for a in actions if a["type"] == "discard")
    assert all(0 < n < judged // 2 for n in departed.values()), (departed, judged)  # mostly the book


# -- bad logs: one clear line each, never a traceback --------------------------------------------

def _lines(data: bytes):
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _write(path: Path, lines) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


BAD = {
    "garbage.jsonl": lambda good: b"this is not JSON\n",
    "truncated.jsonl": lambda good: good[:2500],
    "empty.jsonl": lambda good: b"",
    "no_deal.jsonl": lambda good: good.split(b"\n")[0] + b"\n",
    "bad_header.jsonl": lambda good: b'{"log": "canasta-log/1", "preset": "nonsense"}\n',
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_logs_get_one_clear_line(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_bytes(BAD[name](log_bytes(5)))
    assert cli.main([str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(str(path)) and "Traceback" not in err


def test_an_illegal_move_is_refused_with_its_reason(tmp_path, capsys):
    lines = _lines(log_bytes(5))
    i = next(i for i, line in enumerate(lines) if "move" in line and line["action"]["type"] == "discard")
    lines[i]["action"]["card"] = "ZZ"
    path = _write(tmp_path / "illegal.jsonl", lines)
    assert cli.main([str(path), "--seat", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "valid logs only" in err[0] and f"move {lines[i]['move']}" in err[0]


def test_missing_file_seat_out_of_range_and_unknown_player(tmp_path, capsys):
    assert cli.main([str(tmp_path / "nope.jsonl")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    good = tmp_path / "good.jsonl"
    good.write_bytes(log_bytes(5))
    assert cli.main([str(good), "--seat", "9"]) == 2
    assert "seats are 0 to 3, not 9" in capsys.readouterr().err
    assert cli.main([str(good), "--player", "nobody"]) == 2
    assert "no seat is named 'nobody'" in capsys.readouterr().err
    assert read_game(str(good)).players == 4
    with pytest.raises(Refused):
        read_game(str(tmp_path / "nope.jsonl"))


def test_a_fair_game_per_seat_and_as_json(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_bytes(log_bytes(6))
    assert cli.main([str(good), "--worlds", "3"]) == 0  # fair seats: not flagged
    heads = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("  ")]
    assert len(heads) == 4 and all("not flagged" in line for line in heads)
    assert cli.main([str(good), "--player", "seat 1", "--json", "--worlds", "3"]) == 0
    row = orjson.loads(capsys.readouterr().out)
    assert row["flagged"] is False and row["decisions"] > 0 and 0 <= row["p"] <= 1


def test_deals_change_only_what_the_seat_has_not_seen():
    """The hands' deals keep the stock, every hand's size, the cards the table saw a seat take
    and the other hands' cards as a whole, and put red threes only where the true deal could
    hold them; the stock's deals keep every hand. So the seat's view is the same in each."""
    for seed in (4, 8, 9):
        name, ds = decisions(seed)
        for d in ds[::7]:
            truth = d.state._replace(deck=d.state.stock, stock_pos=0)
            rng = random.Random(d.move)
            for _ in range(3):
                w = hands_dealt_again(truth, d.seat, rng)
                assert w.deck == truth.deck and w.hands[d.seat] == truth.hands[d.seat]
                others = [p for p in range(4) if p != d.seat]
                assert [sum(w.hands[p]) for p in others] == [sum(truth.hands[p]) for p in others]
                assert pooled_cards(w, others) == pooled_cards(truth, others)
                for p in others:
                    for k in set(truth.known_from_pile[p]):
                        assert w.hands[p][k] >= min(truth.known_from_pile[p].count(k), truth.hands[p][k])
                    if holds_no_red_three(truth, p):
                        assert not any(w.hands[p][k] for k in range(len(w.hands[p])) if IS_RED_THREE[k])
                assert SeatView(w, d.seat).unseen_counts() == SeatView(truth, d.seat).unseen_counts()
                s = stock_shuffled(truth, rng)
                assert s.hands == truth.hands and sorted(s.deck) == sorted(truth.deck)


def pooled_cards(state, seats):
    return [sum(state.hands[p][k] for p in seats) for k in range(len(state.hands[0]))]


def test_decisions_of_one_hand_count_as_one_piece_of_evidence():
    """A hand's decisions share its deal: a hundred high ranks in one hand are one hand's
    luck, not a hundred independent signs; over many hands the same ranks add up."""
    one = Evidence()
    for _ in range(100):
        one.add(("g", 1), 1.0)
    assert one.z_independent == pytest.approx(10.0) and one.z == pytest.approx(1.0)
    many = Evidence()
    for h in range(100):
        many.add(("g", h), 1.0)
    assert many.z == pytest.approx(10.0)
    mixed = Evidence()
    for h in range(50):
        mixed.add(("g", h), 2.0)
        mixed.add(("g", h), -2.0)
    assert mixed.z == 0.0 and Evidence().z == 0.0
