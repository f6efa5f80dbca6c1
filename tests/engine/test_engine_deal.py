"""Dealing, the upcard sequence and red threes: R1, R2, R3, R4, R14, R23.

Every scenario is dealt from an explicit deck order (tests/engine/helpers.py:make_deck).
"""

from __future__ import annotations

from collections import Counter

import pytest

from engine import RulesError, code, deal, new_game, resolve
from tests.engine.helpers import (
    PRESET_NAMES,
    after_opening,
    all_cards,
    discard,
    draw,
    hand,
    hand_list,
    illegal,
    make_deck,
    meld,
    pack_counter,
    play,
    skip_stock,
    start,
    take,
)

CONFIGS = [
    ("classic", 4), ("finnish", 4), ("finnish-2p", 2), ("finnish-3p", 3), ("bicycle", 4),
    ("wiki", 2), ("wiki", 3), ("wiki", 4), ("wiki", 6),
    ("norwegian", 2), ("norwegian", 3), ("norwegian", 4), ("norwegian", 5), ("norwegian", 6),
]


# -- the helper itself ------------------------------------------------------------------------


@pytest.mark.parametrize("preset,players", CONFIGS)
def test_make_deck_deals_what_it_names(preset, players):
    """The deck is the whole pack, and dealing puts every named card where the test said."""
    rules = resolve(preset, players)
    suits = "SHDCSH"
    hands = {seat: [r + suits[seat] for r in "KQ9"][: 1 + seat % 3] for seat in range(players)}
    deck = make_deck(rules, hands=hands, upcards=["2C", "3S", "8H"], stock=["7H", "6D"], stock_bottom=["4S"])
    assert Counter(deck) == pack_counter(rules)
    state = deal(new_game(rules), deck)
    for seat, cards in hands.items():
        assert not Counter(cards) - hand(state, seat)
        assert sum(state.hands[seat]) == rules.dealing.hand_size
    assert [code(k) for k in state.pile] == ["2C", "3S", "8H"]
    assert [code(k) for k in state.stock[:2]] == ["7H", "6D"] and code(state.deck[-1]) == "4S"
    assert all_cards(state) == pack_counter(rules)
    # the filler keeps red threes, jokers and 2s out of the hands
    for seat in range(players):
        assert not any(c in ("3H", "3D", "JK") or c[0] == "2" for c in hand(state, seat))


def test_make_deck_seat_zero_gets_the_first_card():
    """'Canastan jako tehdään yksi kortti kerrallaan myötäpäivään, jakajan vasemmalta puolelta alkaen.' (002)"""
    rules = resolve("classic")
    deck = make_deck(rules)
    state = deal(new_game(rules), deck)
    for i in range(4 * 11):
        assert hand(state, i % 4)[deck[i]] >= 1
    # the second hand is dealt by seat 0: seat 1 gets the first card
    deck2 = make_deck(rules, hands={1: ["KH"]}, dealer=0)
    assert deck2[0] == "KH"


# -- R1: the upcard sequence --------------------------------------------------------------------

# (upcards, {preset: the card that freezes the pile, or None})
UPCARDS = [
    (["JK", "7H"], dict.fromkeys(PRESET_NAMES, "JK")),
    (["2C", "7H"], dict.fromkeys(PRESET_NAMES, "2C")),
    (
        ["3H", "7H"],
        {"classic": "3H", "finnish": "3H", "finnish-2p": "3H", "finnish-3p": "3H", "bicycle": "3H",
         "wiki": None, "norwegian": "3H"},
    ),
    (
        ["3S", "7H"],
        {"classic": "3S", "finnish": None, "finnish-2p": None, "finnish-3p": None, "bicycle": "3S",
         "wiki": None, "norwegian": None},
    ),
    (
        ["3C", "3D", "2H", "JK", "9C"],
        {"classic": "3C", "finnish": "3D", "finnish-2p": "3D", "finnish-3p": "3D", "bicycle": "3C",
         "wiki": "2H", "norwegian": "3D"},
    ),
]


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("upcards,frozen", UPCARDS, ids=lambda v: "-".join(v) if isinstance(v, list) else "")
def test_r1_upcard_sequence(preset, upcards, frozen):
    """R1. Jokers, 2s and threes are turned over until a natural 4..A is on top; all stay in
    the pile, and which of them freeze is per preset.

    classic: "Jos päällimmäinen kortti on jokeri, kakkonen tai kolmonen, käännä lisää kortteja, kunnes päällimmäisenä on luonnollinen kortti nelosesta ylöspäin." (001)
    "Villi kortti tai musta kolmonen jäädyttää pinon uudelleen. Myös ensimmäisenä päällimmäiseksi kortiksi käännetty punainen kolmonen jäädyttää pinon." (001)
    finnish: "Jos kääntökortti on jokeri, kakkonen tai punainen kolmonen, se käännetään poikittain avopakkaan ja päälle käännetään umpipakan seuraava kortti." (000)
    "Myös mustan kolmosen päälle kuuluu kääntää uusi kortti, mutta mustaa kolmosta ei käännetä poikittain." (000)
    bicycle: "Jos se on jokeri, kakkonen tai mikä tahansa kolmonen, käännä sen päälle lisää kortteja." (002)
    "Jokeri, kakkonen tai musta kolmonen lukitsee pakan sekä aloituskorttina että pelaajan poistamana." (002)
    wiki: "Jos jokin näistä bonuskorteista oli jokerikortti, se myös jäädyttää heitetyn kasan, kunnes villi kortti sisältävä heitävä kasa on laillisesti otettu pelaajan käsiin." (003)
    """
    state = start(preset, upcards=upcards, stock=["8S"])
    assert [code(k) for k in state.pile] == upcards
    assert code(state.stock[0]) == "8S"  # the stock starts right after the natural upcard
    want = frozen[preset]
    assert (code(state.pile_frozen_by) if state.pile_frozen_by >= 0 else None) == want
    assert all_cards(state) == pack_counter(state.rules)


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("upcard", ["3H", "3S", "JK"])
def test_r1_a_freezing_upcard_needs_a_natural_pair_after_opening(preset, upcard):
    """R1/R11. Once the side has opened, an unfrozen pile is taken with one natural and one
    wild; a freezing upcard still in the pile demands a natural pair.

    "Alkuun käännetty lukitseva erikoiskortti jää pakan sisään; käännä alin lukitseva kortti poikittain merkiksi lukituksesta." (002)
    "Kun poistopino ei ole jäädytetty, saat ottaa sen käyttämällä päällimmäistä korttia kahden samanarvoisen luonnollisen kortin kanssa, yhden luonnollisen kortin ja yhden villin kortin kanssa tai asettamalla päällimmäisen kortin parisi olemassa olevaan ilmoitukseen." (001)
    """
    state, taker = after_opening(preset, taker_cards=["KD", "KH", "JK"], upcards=[upcard, "9C"])
    rules = state.rules
    freezes = {
        "3H": rules.dealing.upcard_red_three_freezes,
        "3S": rules.dealing.upcard_black_three_freezes,
        "JK": rules.dealing.upcard_wild_freezes,
    }[upcard]
    if freezes:
        illegal(state, taker, take("KD", "JK"), "pile_frozen")
    else:
        after = play(state, (taker, take("KD", "JK")))
        assert after.pile == ()
    after = play(state, (taker, take("KD", "KH")))
    assert after.pile == () and after.pile_frozen_by == -1
    team = rules.team_of(taker)
    if upcard == "3H" and rules.pile.pile_red_threes == "laid":  # R4: laid for the side, not replaced
        assert "3H" not in hand(after, taker)
        assert [code(k) for k in after.red_threes[team]] == ["3H"]
    elif upcard == "3H":  # R4 (norwegian): it goes to the hand with the rest of the pile
        assert hand(after, taker)["3H"] == 1 and after.red_threes[team] == ()


# -- R2: red threes in the dealt hands -----------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r2_dealt_red_threes(preset):
    """R2. Dealt red threes are laid and replaced at once after the deal (classic, wiki), at
    the player's first turn (finnish, bicycle), or not at all (norwegian, R14).

    "Vaihda kädessä oleva punainen kolmonen heti uuteen korttiin nostopakasta, jotta kädessäsi on taas yksitoista pelattavaa korttia." (001)
    "Ensimmäisellä vuorollaan pelaajat pelaavat käsistään kaikki punaiset kolmoset pöydälle kuvapuoli ylöspäin ja nostavat umpipakasta yhtä monta korttia tilalle. Jos umpipakasta nousee punaisia kolmosia, nekin pöydätään ja korvataan uusilla korteilla." (000)
    "Jaossa saatujen kolmosten korvaaminen ei korvaa vuorosi tavallista nostoa." (002)
    "Jokaisen pelaajan, joka saa punaisen kolmen alkuperäisessä kädessään, on heti pelattava se pöytäjoukkueelle ja piirrettävä uusi kortti varastosta heidän käsiinsä." (003)
    "Røde treere er bonuskort og kan legges ned på bordet en og en." (004)
    """
    state = start(preset, hands={0: ["3D"], 1: ["3H"]}, stock=["3D", "9H", "8H", "7S", "6S", "5S", "4S"])
    rules = state.rules
    mode = "optional" if rules.melding.red_threes_optional else rules.dealing.dealt_red_threes
    t0, t1 = rules.team_of(0), rules.team_of(1)
    reds = lambda s, t: [code(k) for k in s.red_threes[t]]  # noqa: E731
    if mode == "at_once":
        # seat 0 lays 3D, its replacement 3D is laid and replaced by 9H; then seat 1: 3H -> 8H
        assert reds(state, t0) == ["3D", "3D"] and reds(state, t1) == ["3H"]
        assert hand(state, 0)["9H"] == 1 and hand(state, 1)["8H"] == 1
        assert code(state.stock[0]) == "7S"
        after = play(state, (0, draw()))
        assert hand(after, 0)["7S"] == 1
    elif mode == "first_turn":
        # seat 0's first turn has begun: its threes are laid, seat 1 still holds its 3H
        assert reds(state, t0) == ["3D", "3D"] and reds(state, t1) == []
        assert hand(state, 0)["9H"] == 1 and hand(state, 1)["3H"] == 1
        assert sum(state.hands[0]) == rules.dealing.hand_size and state.phase == "draw"
        after = play(state, (0, draw()))  # the normal draw comes on top of the replacements
        assert hand(after, 0)["8H"] == 1
        after = play(after, (0, discard("8H")))
        assert after.turn == 1 and reds(after, t1) == ["3H"] and hand(after, 1)["3H"] == 0
        assert sum(after.hands[1]) == rules.dealing.hand_size
    else:
        assert reds(state, t0) == [] and reds(state, t1) == []
        assert hand(state, 0)["3D"] == 1 and hand(state, 1)["3H"] == 1
        after = play(state, (0, draw()))
        assert hand(after, 0)["3D"] == 2  # drawn and kept
    assert all_cards(state) == pack_counter(rules)


# -- R3: a red three drawn from the stock ---------------------------------------------------------


@pytest.mark.parametrize("preset,players", CONFIGS)
def test_r3_drawn_red_three_is_laid_and_replaced(preset, players):
    """R3. A red three drawn from the stock is laid and replaced, again if the replacement is
    red; with a two-card draw each red three is replaced; the replacement completes the draw.

    "Nostetut punaiset kolmoset pelataan heti pöytään ja jos kortti nostettiin umpipakasta, tilalle nostetaan uusi kortti." (000)
    "Suljetusta nostopakasta saatu punainen kolmonen asetetaan heti näkyviin ja korvataan uudella nostolla. Jos korvaava korttikin on punainen kolmonen, toimi samoin." (002)
    "Vuoron nostossa saadun kolmosen korvaava kortti puolestaan päättää tavallisen noston." (002)
    "Jos varastosta vedetty kortti on punainen kolme, pelaajan on pelattava se heti ja piirrettävä uusi kortti." (003)
    """
    state = start(preset, players, stock=["3H", "3D", "9C", "8C", "7C"])
    rules = state.rules
    before = hand(state, 0)
    after = play(state, (0, draw()))
    got = hand(after, 0) - before
    assert after.phase == "play" and after.drawn == "stock"
    if rules.melding.red_threes_optional:  # R14: norwegian keeps them in hand
        assert got == Counter(["3H"]) and after.red_threes[0] == ()
        return
    assert [code(k) for k in after.red_threes[0]] == ["3H", "3D"]
    if rules.dealing.draw_count == 1:
        assert got == Counter(["9C"])
    else:
        assert got == Counter(["9C", "8C"])
    assert sum(after.hands[0]) == rules.dealing.hand_size + rules.dealing.draw_count
    assert all_cards(after) == pack_counter(rules)


@pytest.mark.parametrize("preset,players", [("finnish-2p", 2), ("finnish-3p", 3), ("wiki", 2), ("wiki", 3)])
def test_r3_two_card_draw_with_a_red_three_second(preset, players):
    """R3 with a two-card draw: the red three is the second card; its replacement is the
    second card of the draw.

    "Kaksinpelissä pelaajille jaetaan 15 korttia, umpipakasta nostetaan kaksi korttia (vuoron lopussa heitetään pois silti vain yksi kortti) ja lopettamiseen tarvitaan kaksi canastaa." (000)
    """
    state = start(preset, players, stock=["9C", "3H", "8C", "7C"])
    after = play(state, (0, draw()))
    assert hand(after, 0) - hand(state, 0) == Counter(["9C", "8C"])
    assert [code(k) for k in after.red_threes[0]] == ["3H"]
    assert code(after.stock[0]) == "7C"


# -- R4: a red three from the pile ----------------------------------------------------------------


LAID_PRESETS = [p for p in PRESET_NAMES if resolve(p).pile.pile_red_threes == "laid"]


@pytest.mark.parametrize("preset", LAID_PRESETS)
def test_r4_pile_red_three_is_laid_not_replaced(preset):
    """R4. A red three that comes with the pile is laid for the taker's side; no card replaces it.

    "Poistopakan mukana saadun punaisen kolmosen tilalle ei nosteta korvaavaa korttia. Laita se silti näkyviin muiden punaisten kolmostenne viereen." (002)
    "Tällä tavalla otettua bonusta punaista kolmea ei korvata toisella kortilla kortilla, kuten jos se olisi otettu varastosta pelaajan säännöllisen vuoron aikana." (003)
    """
    state = start(preset, hands={0: ["KH", "KS", "AH", "AS", "AD"]}, upcards=["3D", "KC"], stock=["9C"])
    before = sum(state.hands[0])
    stock_before = state.stock_size
    after = play(state, (0, take("KH", "KS", melds=[["AH", "AS", "AD"]])))
    assert [code(k) for k in after.red_threes[0]] == ["3D"]
    assert sum(after.hands[0]) == before - 5  # nothing from the pile reached the hand
    assert after.stock_size == stock_before
    assert all_cards(after) == pack_counter(after.rules)


NORWEGIAN_TAKE = ["KH", "KS", "KD", "JK"]  # with the upcard KC: 90, enough to open alone (R9)


@pytest.mark.parametrize("players", [2, 4])
def test_r4_norwegian_pile_red_three_goes_to_the_hand(players):
    """R4 (norwegian). A red three in the taken pile goes to the hand with the other pile cards
    that are not melded; it is not laid and not replaced then. From the hand it is laid later
    with a replacement draw, or kept, or discarded, like any red three there (R14).

    "Når man tar inn sakehaugen skal man ta de kortene som ikke benyttes til å bygge kombinasjoner på hånden." (004)
    "Røde treere er bonuskort og kan legges ned på bordet en og en. Når man legger en rød treer på bordet, skal man trekke inn et nytt kort fra bunken." (004)
    """
    state = start("norwegian", players, hands={0: NORWEGIAN_TAKE + ["9H", "8S"]}, upcards=["3D", "KC"], stock=["7C", "6C"])
    assert state.rules.pile.pile_red_threes == "to_hand"
    before = sum(state.hands[0])
    stock_before = state.stock_size
    taken = play(state, (0, take(*NORWEGIAN_TAKE)))
    assert hand(taken, 0)["3D"] == 1 and taken.red_threes[0] == ()
    assert sum(taken.hands[0]) == before - 4 + 1 and taken.stock_size == stock_before
    assert all_cards(taken) == pack_counter(taken.rules)
    # laid later, with a replacement from the stock
    laid = play(taken, (0, meld(["3D"])))
    assert [code(k) for k in laid.red_threes[0]] == ["3D"] and hand(laid, 0)["7C"] == 1
    assert sum(laid.hands[0]) == sum(taken.hands[0])
    # or kept to the next turn
    kept = play(taken, (0, discard("9H")))
    assert hand(kept, 0)["3D"] == 1
    # or discarded (which locks the pile for a round, R11)
    thrown = play(taken, (0, discard("3D")))
    assert code(thrown.pile[-1]) == "3D" and thrown.pile_lock == 0


def test_r4_red_threes_to_the_hand_need_optional_red_threes():
    """R4/R14. A red three can go to the hand only where the player may lay or discard it.

    "Røde treere er bonuskort og kan legges ned på bordet en og en." (004)
    """
    with pytest.raises(RulesError, match="pile_red_threes"):
        resolve("classic", overrides={"pile_red_threes": "to_hand"})
    assert resolve("norwegian", overrides={"pile_red_threes": "laid"}).pile.pile_red_threes == "laid"


# -- R14: norwegian red threes are optional ------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_r14_norwegian_lays_a_red_three_when_it_likes(players):
    """R14. In norwegian a red three stays in hand; the player lays it with a meld of the
    single card and draws a replacement; the side's red threes score.

    "Røde treere er bonuskort og kan legges ned på bordet en og en. Når man legger en rød treer på bordet, skal man trekke inn et nytt kort fra bunken." (004)
    """
    state = start("norwegian", players, hands={0: ["3H", "3D"]}, stock=["9C", "8C", "7C"])
    assert hand(state, 0)["3H"] == 1 and state.red_threes[0] == ()
    illegal(state, 0, meld(["3H"]), "must_draw_first")
    state = play(state, (0, draw()))
    after = play(state, (0, meld(["3H"])))
    assert [code(k) for k in after.red_threes[0]] == ["3H"]
    assert hand(after, 0)["3H"] == 0 and hand(after, 0)["8C"] == 1  # the replacement
    assert sum(after.hands[0]) == sum(state.hands[0])
    assert not after.opened(0)  # a red three is not a meld
    both = play(state, (0, meld(["3H"], ["3D"])))
    assert sorted(code(k) for k in both.red_threes[0]) == ["3D", "3H"]
    assert hand(both, 0)["8C"] == 1 and hand(both, 0)["7C"] == 1
    illegal(state, 0, meld(["3H", "3D"]), "cannot_meld_red_three")
    assert all_cards(after) == pack_counter(after.rules)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r14_discarding_a_red_three(preset):
    """R14. Only in norwegian may a red three be kept and discarded; elsewhere it is laid at
    once and can never be discarded.

    "Pois saa heittää mitä tahansa, paitsi punaisia kolmosia." (000)
    "Om man saker en rød treer, er sakehaugen sperret i en runde rundt bordet." (004)
    """
    state = start(preset, hands={0: ["3H"]}, stock=["9C", "8C"])
    state = play(state, (0, draw()))
    if state.rules.melding.red_threes_optional:
        after = play(state, (0, discard("3H")))
        assert code(after.pile[-1]) == "3H" and after.pile_lock == 0
    else:
        assert hand(state, 0)["3H"] == 0
        illegal(state, 0, discard("3H"), "cannot_discard_red_three")
        illegal(state, 0, meld(["3H"]), "cannot_meld_red_three")


def test_r14_norwegian_red_three_kept_in_hand_counts_against():
    """R14 (the project's documented choice): a red three still in hand at the end of the
    hand counts 100 against the side, like a card, and earns no bonus.

    "Røde treere er bonuskort og kan legges ned på bordet en og en." (004)
    """
    state = start("norwegian", 2, hands={1: ["3H"]}, stock_bottom=["9C"])
    state = skip_stock(state, 1)
    state = play(state, (0, draw()), (0, discard("9C")))  # the stock is now empty: the hand ends
    assert state.hand_result["reason"] == "stock_exhausted"
    r1 = state.hand_result["scores"][1]
    assert r1["red_threes"] == 0 and r1["penalties"] == 0
    assert r1["in_hand"] == -sum(_value(c) for c in hand_list(state, 1))
    assert r1["in_hand"] <= -100


def _value(c: str) -> int:
    from engine.cards import VALUE, parse_card

    return VALUE[parse_card(c)]


# -- R23: a lone last card completes a two-card draw -------------------------------------------------


@pytest.mark.parametrize("preset,players", CONFIGS)
def test_r23_lone_last_card(preset, players):
    """R23. With one card left in the stock, drawing it is a complete draw (two-card draws
    included); play goes on with the meld and discard phase.

    "umpipakasta nostetaan kaksi korttia (vuoron lopussa heitetään pois silti vain yksi kortti)" (000)
    """
    state = start(preset, players, stock_bottom=["9C"])
    state = skip_stock(state, 1)
    before = hand(state, 0)
    after = play(state, (0, draw()))
    assert hand(after, 0) - before == Counter(["9C"])
    assert after.phase == "play" and after.stock_size == 0
    after = play(after, (0, discard("9C")))
    # the stock is gone and seat 1 (not opened, no pair of nines) cannot take the pile: R21
    assert after.hand_result["reason"] == "stock_exhausted" and after.hand_result["by"] == 1


# -- the deal rotates ----------------------------------------------------------------------------------


def test_r2_at_once_follows_playing_order_from_the_dealers_left():
    """R2 (classic, at once): seat by seat from the dealer's left, each seat replaces all its
    red threes (replacements included) before the next seat. Seat 0 deals here: seat 1 first.

    "Jakajan vasemmalla puolella istuva pelaaja aloittaa. Sen jälkeen vuoro kiertää myötäpäivään." (001)
    """
    rules = resolve("classic")
    deck = make_deck(rules, hands={0: ["3D"], 1: ["3H"]}, stock=["3D", "9H", "8H"], dealer=0)
    state = deal(new_game(rules, first_dealer=0), deck)
    assert state.dealer == 0 and state.to_act == 1
    assert [code(k) for k in state.red_threes[1]] == ["3H", "3D"]  # seat 1's team, first
    assert [code(k) for k in state.red_threes[0]] == ["3D"]
    assert hand(state, 1)["9H"] == 1 and hand(state, 0)["8H"] == 1


def test_the_next_hand_rotates_the_dealer_and_uses_the_new_totals():
    """The next dealer is the previous dealer's left neighbour; the opening minimum comes from
    the totals at the start of the new hand.

    "Seuraavan jaon jakaja on edellisen jakajan vasemmalla puolella." (002)
    """
    state = skip_stock(start("classic", totals=[10, 2000]), 0)
    state = play(state, (0, {"type": "pass"}))  # an empty stock at once: the hand ends
    assert state.phase == "deal" and state.totals[0] < 0 < state.totals[1] < 3000
    rules = state.rules
    state = deal(state, make_deck(rules, hands={1: ["KH"]}, dealer=0))
    assert state.hand_no == 2 and state.dealer == 0 and state.to_act == 1
    assert hand(state, 1)["KH"] == 1
    assert state.minimums == (15, 90)


def test_deal_checks_the_deck_and_its_commitment():
    """docs/gamelog.md: a deck is a permutation of the preset's pack and matches its commitment."""
    from engine import IllegalMove, commitment

    rules = resolve("classic")
    deck = make_deck(rules)
    game = new_game(rules)
    for bad in (deck[:-1], deck[:-1] + ["KH"], deck[:-1] + ["XX"]):
        with pytest.raises(IllegalMove) as info:
            deal(game, bad)
        assert info.value.code == "invalid_deck"
    salt = "ab" * 16
    with pytest.raises(IllegalMove) as info:
        deal(game, deck, salt, "0" * 64)
    assert info.value.code == "commitment_mismatch"
    state = deal(game, deck, salt, commitment(salt, deck))
    assert state.commitment == commitment(salt, deck)
    with pytest.raises(IllegalMove) as info:
        deal(state, deck)
    assert info.value.code == "not_dealing"
    wiki6 = resolve("wiki", 6)
    assert len(make_deck(wiki6)) == 162
