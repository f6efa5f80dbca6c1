"""Freezing, frozen piles and piles that can never be taken: R11, R12, R13."""

from __future__ import annotations

import pytest

from engine import RulesError, apply, code, describe_move, resolve, spectator_view
from tests.engine.helpers import (
    PRESET_NAMES,
    after_opening,
    discard,
    draw,
    hand,
    illegal,
    meld,
    meld_codes,
    onto,
    play,
    start,
    take,
)

PARTNERSHIP_PRESETS = ("classic", "finnish", "bicycle", "wiki", "norwegian")


# -- R11: what freezes the pile ------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r11_black_three_discard(preset):
    """R11/R13. A discarded black three stops the next player in every preset. In classic and
    bicycle it also freezes the pile until the pile is taken: once it is covered, taking
    still needs a natural pair. Elsewhere, once covered, an opened side takes the pile with
    one natural and a wild.

    "Jos heittää pois mustan kolmosen, estää seuraavaa pelaajaa nostamasta avopakkaa. Jokerin heittäminen lukitsee pakan." (000)
    "Villi kortti tai musta kolmonen jäädyttää pinon uudelleen." (001)
    "Siinä musta kolmonen lukitsee poistopakan, kunnes pakka nostetaan sääntöjen mukaisesti. Toisissa versioissa musta kolmonen estää vain seuraavan pelaajan noston. Tässä versiossa mustan kolmosen peittäminen toisella kortilla ei siis poista lukitusta." (002)
    "Om man saker en svart treer, kan ikke neste spiller ta inn sakehaugen" (004)
    """
    # the next player, right after the black three
    state = start(preset, hands={0: ["AH", "AS", "AD", "3S"], 1: ["5H", "5S", "QH", "QS", "QD"]}, stock=["8C"])
    state = play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("3S")))
    illegal(state, 1, take("5H", "5S", melds=[["QH", "QS", "QD"]]), "pile_top_untakeable")
    # the same black three, covered, when the opened side comes to take
    state, taker = after_opening(preset, taker_cards=["KD", "KH", "JK"], opener_discard="3S")
    assert code(state.pile[-1]) == "KC"
    if preset in ("classic", "bicycle"):
        assert code(state.pile_frozen_by) == "3S"
        illegal(state, taker, take("KD", "JK"), "pile_frozen")
    else:
        assert state.pile_frozen_by == -1
        after = play(state, (taker, take("KD", "JK")))
        assert hand(after, taker)["3S"] >= 1  # the black three came with the pile
    after = play(state, (taker, take("KD", "KH")))
    assert after.pile == () and after.pile_frozen_by == -1


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("wild", ["JK", "2C"])
def test_r11_wild_discard_freezes_until_taken(preset, wild):
    """R11. A discarded joker or 2 freezes the pile for everybody until it is taken; the take
    lifts the freeze and the next pile starts unfrozen.

    "avopakassa on jokeri tai kakkonen" (000)
    "Kun lukittu poistopakka nostetaan kokonaan, sen aiheuttama lukitus poistuu. Seuraava poisto aloittaa uuden poistopakan, joka voi lukittua uudelleen erikoiskortista." (002)
    "Om man saker en joker eller en toer, er sakehaugen sperret slik at den som skal ta den inn, må ha to like av det øverste kortet på hånden." (004)
    """
    state, taker = after_opening(preset, taker_cards=["KD", "KH", "JK", "QH"], opener_discard=wild)
    assert code(state.pile_frozen_by) == wild
    assert spectator_view(state)["pile"]["frozen_by"] == wild
    illegal(state, taker, take("KD", "JK"), "pile_frozen")
    after = play(state, (taker, take("KD", "KH")))
    assert after.pile_frozen_by == -1 and hand(after, taker)[wild] >= 1
    after = play(after, (taker, discard("QH")))
    assert [code(k) for k in after.pile] == ["QH"] and after.pile_frozen_by == -1


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r11_norwegian_red_three_discard_locks_a_round(players):
    """R11 (norwegian). After a red three is discarded nobody may take the pile until play
    comes back to the discarder; then it is an ordinary pile card that goes to the hand of
    whoever takes the pile (R4).

    "Om man saker en rød treer, er sakehaugen sperret i en runde rundt bordet. Dermed kan ingen spillere ta den inn før det har gått en runde frem til den opprinnelige spilleren" (004)
    """
    ranks = "6789T"
    hands = {0: ["AH", "AS", "AD", "3H", ranks[players - 2] + "H", ranks[players - 2] + "S"]}
    for seat in range(1, players):
        hands[seat] = [ranks[seat - 1] + "C"]
        if seat > 1:
            hands[seat] += [ranks[seat - 2] + "H", ranks[seat - 2] + "S"]
    state = start("norwegian", players, hands=hands)
    state = play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("3H")))
    assert state.pile_lock == 0
    assert spectator_view(state)["pile"]["locked_until_seat"] == 0
    for seat in range(1, players):
        r = ranks[seat - 2] if seat > 1 else None
        if r is None:
            illegal(state, seat, take("5H", "5S"), "pile_top_untakeable")  # the red 3 is on top
        else:
            illegal(state, seat, take(r + "H", r + "S"), "pile_locked")
        state = play(state, (seat, draw()), (seat, discard(ranks[seat - 1] + "C")))
    assert state.turn == 0 and state.pile_lock == -1
    r = ranks[players - 2]
    after = play(state, (0, take(r + "H", r + "S")))
    assert after.red_threes[0] == () and hand(after, 0)["3H"] == 1


# -- R12: taking a frozen pile ----------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r12_unopened_side_needs_a_natural_pair_and_the_minimum(preset):
    """R12. The pile is frozen against a side that has not opened: a natural pair of the top
    card's rank from hand, and melds reaching the minimum in the same move.

    "Lukitun pakan saa nostaa vain, jos pystyy pöytäämään päällimmäisen kortin kahden kädestä löytyvän samanarvoisen luonnollisen (ei-jokerin) kortin kanssa." (000)
    "Poistopino on jäädytetty parilta ennen sen ensimmäistä ilmoitusta." (001)
    "Jos avaus puuttuu, näytä samalla muut avausrajan täyttämiseen tarvittavat yhdistelmät." (002)
    "Før man har åpnet må man ha to kort på hånda som er lik det øverste kortet i sakehaugen." (004)
    """
    state = start(preset, hands={0: ["KH", "KS", "JK", "AH", "AS", "AD"]}, upcards=["KC"])
    assert state.pile_frozen_by == -1 and not state.opened(0)
    illegal(state, 0, take("KH", "JK"), "pile_frozen")
    illegal(state, 0, take("KH", "JK", melds=[["AH", "AS", "AD"]]), "pile_frozen")
    illegal(state, 0, take("KH", "KS"), "opening_minimum_not_met")  # 30 < 50
    after = play(state, (0, take("KH", "KS", "JK")))  # a natural pair plus a wild: 80
    assert sorted(meld_codes(after, 0)["K"]) == ["JK", "KC", "KH", "KS"]
    with_aces = take("KH", "KS", melds=[["AH", "AS", "AD"]])
    if state.rules.pile.opening_from_pile == "pile_meld_alone":  # R9 (norwegian): 30 alone is short
        illegal(state, 0, with_aces, "opening_minimum_not_met")
    else:
        assert play(state, (0, with_aces)).opened(0)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r12_frozen_pile_the_sides_meld_does_not_help(preset):
    """R12. A pile frozen by a wild needs a natural pair from hand even when the side has a
    meld of the top card's rank; a wild does not pair a single natural.

    "Pöydässä oleva samanarvoinen yhdistelmä ei yksin riitä, eikä yhden käsikortin pariksi kelpaa jokeri." (002)
    "Jäädytetyn poistopinon ottaminen vaatii, että kädessäsi on luonnollinen pari, joka on samaa arvoa kuin päällimmäinen kortti." (001)
    """
    state, taker = after_opening(
        preset,
        taker_cards=["KD", "KH", "JK"],
        opener_melds=(("AH", "AS", "AD"), ("KH", "KS", "KD")),
        opener_discard="JK",
    )
    team = state.rules.team_of(taker)
    illegal(state, taker, onto("K"), "pile_frozen")
    illegal(state, taker, take("KD"), "pile_frozen")
    illegal(state, taker, take("KD", "JK"), "pile_frozen")
    after = play(state, (taker, take("KD", "KH")))
    assert len(meld_codes(after, team)["K"]) == 6


# -- R13: never takeable -------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("top", ["JK", "2D", "3C"])
def test_r13_untakeable_top_card(preset, top):
    """R13. Never while a wild card or a three is on top (norwegian lays a discarded wild
    beside the pile: see the next test).

    "Et saa koskaan ottaa poistopinoa, kun päällimmäinen kortti on villi kortti, musta kolmonen tai punainen kolmonen." (001)
    "Jos poistopakan päällä on kolmonen, kakkonen tai jokeri, canastan säännöt kieltävät noston kokonaan." (002)
    "Pakkaa, jossa on päällä musta kolmonen ei voi nostaa, koska mustaa kolmosta ei saa pelata yhdistelmiin." (000)
    """
    state = start(preset, hands={0: ["AH", "AS", "AD", top], 1: ["2H", "JK", "3S", "3C", "5H", "5S"]}, stock=["8C"])
    state = play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard(top)))
    if top != "3C" and state.rules.pile.discarded_wilds == "beside_pile":
        assert code(state.pile[-1]) != top and [code(k) for k in state.pile_beside] == [top]
        return
    illegal(state, 1, take("2H", "JK"), "pile_top_untakeable")
    illegal(state, 1, take("3S", "3C"), "pile_top_untakeable")
    illegal(state, 1, take("5H", "5S"), "pile_top_untakeable")
    play(state, (1, draw()))


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("wild", ["JK", "2D"])
def test_r13_norwegian_wild_beside_the_pile(preset, wild):
    """R13 (norwegian). A discarded joker or 2 is laid beside the pile, not on it: the card
    under it stays the top card, and the pile is then taken only with a natural pair of that
    card; the wild goes with the pile to whoever takes it. Elsewhere the wild is the top card
    and the pile cannot be taken at all.

    "Om man saker en joker eller en toer, er sakehaugen sperret slik at den som skal ta den inn, må ha to like av det øverste kortet på hånden. Dermed legger man jokeren eller toeren ved siden av sakehaugen, så man kan se at den er delvis sperret." (004)
    "Jos poistopakan päällä on kolmonen, kakkonen tai jokeri, canastan säännöt kieltävät noston kokonaan." (002)
    """
    # the opener discarded 5C; the next seat discards the wild
    state, taker = after_opening(preset, taker_cards=["5D", "5H", "JK", "QH"], last_discard=wild)
    team = state.rules.team_of(taker)
    if state.rules.pile.discarded_wilds != "beside_pile":
        assert code(state.pile[-1]) == wild
        illegal(state, taker, take("5D", "5H"), "pile_top_untakeable")
        return
    assert code(state.pile[-1]) == "5C" and [code(k) for k in state.pile_beside] == [wild]
    view = spectator_view(state)["pile"]
    assert (view["top"], view["beside"], view["frozen_by"]) == ("5C", [wild], wild)
    assert {"reason": "wild_beside_pile", "card": wild} in view["reasons"]
    illegal(state, taker, take("5D", "JK"), "pile_frozen")
    after = play(state, (taker, take("5D", "5H")))
    assert sorted(meld_codes(after, team)["5"]) == ["5C", "5D", "5H"]
    assert hand(after, taker)[wild] >= 1 and after.pile == () and after.pile_beside == ()
    assert after.pile_frozen_by == -1


@pytest.mark.parametrize("preset", ["norwegian", "finnish"])
def test_r13_the_move_event_says_a_wild_went_beside_the_pile(preset):
    """R13: the event of a wild discarded beside the pile says so (``beside_pile``), so that a
    client need not compare the pile before and after to tell a discard from a wild laid
    beside the pile.

    "Dermed legger man jokeren eller toeren ved siden av sakehaugen, så man kan se at den er delvis sperret." (004)
    """
    state, taker = after_opening(preset, taker_cards=["2D", "QH", "QS"])
    before = play(state, (taker, draw()))
    after = apply(before, taker, discard("2D"))
    event = describe_move(before, after, taker, discard("2D"), None)
    if preset == "norwegian":
        assert event["beside_pile"] is True and code(after.pile[-1]) == "KC"
    else:
        assert "beside_pile" not in event and code(after.pile[-1]) == "2D"
    other = describe_move(before, after, taker, discard("2D"), taker)
    assert other.get("beside_pile") == event.get("beside_pile")


def test_r13_norwegian_wild_beside_an_empty_pile():
    """R13 (norwegian). A wild discarded when the pile is empty (it was just taken) is laid
    beside the empty pile: nothing can be taken until the next discard, which becomes the top
    card; the pile is then taken only with a natural pair of it, the wild going along.

    "Dermed legger man jokeren eller toeren ved siden av sakehaugen, så man kan se at den er delvis sperret." (004)
    """
    state, taker = after_opening("norwegian", taker_cards=["KD", "KH", "2C", "QH"], extra={3: ["QC"], 0: ["QD", "QS", "JK"]})
    assert taker == 2
    state = play(state, (2, take("KD", "KH")), (2, discard("2C")))
    assert state.pile == () and [code(k) for k in state.pile_beside] == ["2C"]
    assert spectator_view(state)["pile"]["top"] is None
    illegal(state, 3, take("QC"), "pile_empty")
    state = play(state, (3, draw()), (3, discard("QC")))
    assert [code(k) for k in state.pile] == ["QC"] and code(state.pile_frozen_by) == "2C"
    illegal(state, 0, take("QD", "JK"), "pile_frozen")
    after = play(state, (0, take("QD", "QS")))
    assert hand(after, 0)["2C"] == 1 and after.pile_beside == ()


def test_r13_a_wild_beside_the_pile_needs_the_freeze():
    """R13/R11. The wild beside the pile is the sign of its freeze: a house rule without the
    freeze cannot lay it there.

    "Dermed legger man jokeren eller toeren ved siden av sakehaugen, så man kan se at den er delvis sperret." (004)
    """
    with pytest.raises(RulesError, match="discarded_wilds"):
        resolve("norwegian", overrides={"discard_wild_freezes": False})
    assert resolve("classic", overrides={"discarded_wilds": "beside_pile"}).pile.discarded_wilds == "beside_pile"


def _single_card_scenario(preset: str, seat3_takes: bool):
    """Seat 0 opens with a canasta of kings and three nines and keeps one nine; the last seat
    before it then discards a nine, either after taking the pile (a pile of one card) or not."""
    hands = {
        0: ["KH", "KS", "KD", "KC", "KH", "KS", "KD", "9H", "9S", "9D", "9C"],
        1: ["6C"],
        2: ["5C"],
        3: ["5H", "5S", "JK", "9D"],
    }
    state = start(preset, hands=hands, stock=["8H"])
    state = play(
        state,
        (0, draw()),
        (0, meld(["KH", "KS", "KD", "KC", "KH", "KS", "KD"], ["9H", "9S", "9D"])),
        (0, discard("8H")),
        (1, draw()),
        (1, discard("6C")),
        (2, draw()),
        (2, discard("5C")),
    )
    if seat3_takes:
        state = play(state, (3, take("5H", "5S", "JK")))  # 65, enough in one meld everywhere
    else:
        state = play(state, (3, draw()))
    state = play(state, (3, discard("9D")))
    assert sum(state.hands[0]) == 1 and hand(state, 0)["9C"] == 1
    return state


@pytest.mark.parametrize("preset", PARTNERSHIP_PRESETS)
def test_r13_one_card_in_hand_and_one_in_the_pile(preset):
    """R13. A player holding one card may not take a pile of one card; a bigger pile is fine.

    "Pelaaja, jolla on kädessään vain yksi kortti, ei saa ottaa avopakkaa, jossa on vain yksi kortti." (000)
    "Jos kädessäsi ja poistopakassa on kummassakin vain yksi kortti, et saa ottaa poistopakkaa." (002)
    """
    state = _single_card_scenario(preset, seat3_takes=True)
    assert len(state.pile) == 1
    illegal(state, 0, onto("9"), "pile_single_card")
    play(state, (0, draw()))
    state = _single_card_scenario(preset, seat3_takes=False)
    assert len(state.pile) > 1
    after = play(state, (0, onto("9")))
    assert len(meld_codes(after, 0)["9"]) == 4
