"""Melds, canastas, the opening minimum and taking an unfrozen pile: R5-R10."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import code, spectator_view
from engine.scoring import score_hand
from tests.engine.helpers import (
    PRESET_NAMES,
    add,
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

NEGATIVE = -100  # a side below zero opens with 15 points: R5 tests need no big melds


def _teams(preset: str, value: int) -> list[int]:
    from engine import resolve

    return [value] * resolve(preset).teams


# -- R5: what a meld is ---------------------------------------------------------------------------

OK = "ok"
R5_CASES = [
    # seed 003's examples first
    ("5-5-2", ["5H", "5S", "2C"], dict.fromkeys(PRESET_NAMES, OK)),
    (
        "9-9-9-2-2-JK",
        ["9H", "9S", "9D", "2C", "2D", "JK"],
        {**dict.fromkeys(PRESET_NAMES, OK), "norwegian": "too_many_wilds"},
    ),
    ("9-9-2-2-2-JK", ["9H", "9S", "2C", "2D", "2H", "JK"], dict.fromkeys(PRESET_NAMES, "too_many_wilds")),
    ("5-2-2", ["5H", "2C", "2D"], dict.fromkeys(PRESET_NAMES, "not_enough_naturals")),
    (
        "2 naturals + 2 wilds",
        ["9H", "9S", "2C", "JK"],
        {**dict.fromkeys(PRESET_NAMES, OK), "norwegian": "too_many_wilds"},
    ),
    (
        "2 naturals + 3 wilds",
        ["9H", "9S", "2C", "2D", "JK"],
        {**dict.fromkeys(PRESET_NAMES, OK), "wiki": "too_many_wilds", "norwegian": "too_many_wilds"},
    ),
    (
        "5 naturals + 4 wilds",
        ["9H", "9S", "9D", "9C", "9H", "2C", "2D", "2H", "JK"],
        {**dict.fromkeys(PRESET_NAMES, "too_many_wilds"), "norwegian": OK},
    ),
    (
        "4 naturals + 3 wilds",
        ["9H", "9S", "9D", "9C", "2C", "2D", "JK"],
        {**dict.fromkeys(PRESET_NAMES, OK), "wiki": OK, "norwegian": OK},
    ),
    ("wilds alone", ["JK", "2C", "2D"], dict.fromkeys(PRESET_NAMES, "not_enough_naturals")),
    ("two ranks", ["9H", "9S", "KH"], dict.fromkeys(PRESET_NAMES, "mixed_ranks")),
    ("two cards", ["9H", "9S"], dict.fromkeys(PRESET_NAMES, "meld_too_small")),
    ("black threes", ["3S", "3C", "3S"], dict.fromkeys(PRESET_NAMES, "black_threes_not_allowed")),
    ("a red three", ["9H", "9S", "3H"], dict.fromkeys(PRESET_NAMES, "cannot_meld_red_three")),
]


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("name,cards,expected", R5_CASES, ids=[c[0] for c in R5_CASES])
def test_r5_meld_composition(preset, name, cards, expected):
    """R5. At least two naturals; at most three wilds (classic, finnish, bicycle); in wiki
    also never more wilds than naturals; in norwegian more naturals than wilds and no cap.

    "Setin korteista vähintään kaksi pitää olla luonnollisia eli muita kuin jokereita. Yhdessä pöytäyksessä saa olla korkeintaan kolme jokeria." (000)
    "Jokaisessa ilmoituksessa on oltava vähintään kaksi luonnollista korttia. Ilmoituksessa saa olla enintään kolme villiä korttia." (001)
    "Yksi kasi ja kaksi jokeria eivät siis kelpaa. Pelkistä jokereista ja kakkosista ei tehdä omaa yhdistelmää." (002)
    "Esimerkit: 5-5-2 ja 9-9-9-2-2-Joker ovat laillisia meldeja. 5-2-2 ei ole laillinen sula, koska se sisältää vain yhden luonnollisen kortin. 9-9-2-2-2-Joker ei ole laillinen, koska se sisältää enemmän villikortteja kuin luonnolliset kortit." (003)
    "De kan altså erstatte andre kort, men det må alltid være flere ekte kort, som er alle kort unntatt joker, 2 og 3, enn «uekte» kort." (004)
    """
    state = start(preset, hands={0: cards}, totals=_teams(preset, NEGATIVE), stock=["8C"])
    if "3H" in cards and not state.rules.melding.red_threes_optional:
        return  # elsewhere a red three never stays in hand (R2/R14): nothing to meld
    state = play(state, (0, draw()))
    if expected[preset] == OK:
        after = play(state, (0, meld(cards)))
        rank = next(c[0] for c in cards if c[0] not in "2J" or c == "JH")
        assert sorted(meld_codes(after, 0)[rank]) == sorted(cards)
        assert not Counter(cards) & (hand(after, 0) - (hand(state, 0) - Counter(cards)))
    else:
        illegal(state, 0, meld(cards), expected[preset])


ADD_CASES = {
    # preset: results of adding 2D, then JK, then 2H to 9-9-2 (each add on the previous result)
    "classic": [OK, OK, "too_many_wilds"],
    "finnish": [OK, OK, "too_many_wilds"],
    "finnish-2p": [OK, OK, "too_many_wilds"],
    "finnish-3p": [OK, OK, "too_many_wilds"],
    "bicycle": [OK, OK, "too_many_wilds"],
    "wiki": [OK, "too_many_wilds", "too_many_wilds"],
    "norwegian": ["too_many_wilds", "too_many_wilds", "too_many_wilds"],
}


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r5_adding_wilds_keeps_the_meld_valid(preset):
    """R5 applies to a meld as it grows, canasta or not.

    "Samalla korvaavien korttien raja voi estää uuden jokerin lisäämisen. Tarkista yhdistelmä kokonaisuutena ennen kortin pelaamista: valmis canasta ei vapauta sitä kolmen korvaavan kortin enimmäismäärästä." (002)
    """
    state = start(
        preset,
        hands={0: ["9H", "9S", "2C", "2D", "JK", "2H", "9D", "9C", "9H", "9S"]},
        totals=_teams(preset, NEGATIVE),
        stock=["8C"],
    )
    state = play(state, (0, draw()), (0, meld(["9H", "9S", "2C"])))
    for card, want in zip(["2D", "JK", "2H"], ADD_CASES[preset], strict=True):
        if want == OK:
            state = play(state, (0, add("9", card)))
        else:
            illegal(state, 0, add("9", card), want)
    # four naturals more: the meld (a canasta in most presets now) still keeps the cap
    state = play(state, (0, add("9", "9D", "9C", "9H", "9S")))
    m = state.melds[0][8]
    assert m.naturals == 6
    if state.rules.melding.max_wilds is None:
        # norwegian: six naturals take up to five wilds
        state = play(state, (0, add("9", "2D")), (0, add("9", "JK")))
        assert state.melds[0][8].wilds == 3
    elif m.wilds == 3:
        illegal(state, 0, add("9", "2H"), "too_many_wilds")
        assert m.is_canasta(state.rules)


# -- R6: one meld per rank per side ------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r6_one_meld_per_rank(preset):
    """R6. A side has one meld of a rank; more cards of it are added; the opponents keep
    their own meld of that rank, and nobody plays to the opponents' melds.

    "seuraavia asioita ei saa tehdä: siirtää jokerikorttia pöytäyksestä toiseen, pitää useampaa samannumeroista pöytäystä, lisätä korttia vastapuolen pöytäykseen" (000)
    "Canastan säännöt rajaavat parin yhdistelmät yhteen kutakin arvoa kohden: jos pöydässä on jo kasien ryhmä, seuraavat kasit lisätään siihen. Vastustajapari saa silti kerätä omaa kasien yhdistelmäänsä." (002)
    "Älä rakenna vastustajien ilmoitusten päälle." (001)
    """
    state = start(
        preset,
        hands={
            0: ["AH", "AS", "AD", "KH", "KS", "KD", "AC", "2C", "KC", "KC", "9D"],
            1: ["KH", "KS", "KD", "QH", "QS", "QD", "AC"],
        },
        stock=["8C", "8D"],
    )
    state = play(state, (0, draw()))
    illegal(state, 0, meld(["KH", "KS", "KD"], ["KC", "KC", "2C"]), "duplicate_meld_rank")
    state = play(state, (0, meld(["AH", "AS", "AD"], ["KH", "KS", "KD"])))
    illegal(state, 0, meld(["KC", "KC", "2C"]), "meld_rank_exists")
    state = play(state, (0, add("K", "KC", "KC")), (0, add("A", "AC")), (0, discard("8C")))
    assert len(meld_codes(state, 0)["K"]) == 5
    seat = 1
    state = play(state, (seat, draw()), (seat, meld(["KH", "KS", "KD"], ["QH", "QS", "QD"])))
    t0, t1 = state.rules.team_of(0), state.rules.team_of(seat)
    assert len(meld_codes(state, t1)["K"]) == 3 and len(meld_codes(state, t0)["K"]) == 5
    illegal(state, seat, add("A", "AC"), "no_meld_to_add")  # only the opponents have aces


# -- R7: canastas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r7_canasta_natural_then_mixed(preset):
    """R7. Seven cards with at least four naturals make a canasta: natural 500, mixed 300;
    a wild added to a natural canasta makes it mixed; an eighth card gives no second bonus.

    "Aidoista canastoista saa 500 pisteen bonuksen, sekacanastoista 300 pisteen bonuksen" (000)
    "Puhdas canasta antaa 500 bonuspistettä. Sekoitettu canasta antaa 300 bonuspistettä. Villi kortti puhtaassa canastassa tekee siitä sekoitetun." (001)
    "Kahdeksas samanarvoinen kortti tuo pistearvonsa, mutta ei toista canastabonusta. Jos lisäät puhtaaseen canastaan korvaavan kortin, se muuttuu sekacanastaksi ja bonus pienenee 500 pisteestä 300 pisteeseen." (002)
    """
    state = start(
        preset,
        hands={0: ["9H", "9S", "9D", "9C", "9H", "9S", "9D", "2C", "9C", "8C", "8D"]},
        stock=["7C"],
    )
    state = play(state, (0, draw()), (0, meld(["9H", "9S", "9D", "9C", "9H", "9S"])))
    team = 0

    def score():
        r = score_hand(state, "stock_exhausted", 0, False)[team]
        return r["melds"], r["canasta_bonus"]

    assert score() == (60, 0)
    assert not state.melds[team][8].is_canasta(state.rules)
    state = play(state, (0, add("9", "9D")))  # the seventh card
    assert score() == (70, 500)
    assert spectator_view(state)["melds"][team][0]["canasta"] == "natural"
    assert state.canastas(team) == 1
    state = play(state, (0, add("9", "2C")))
    assert score() == (90, 300)  # the 2's 20 points do not make up for the lost 200
    assert spectator_view(state)["melds"][team][0]["canasta"] == "mixed"
    state = play(state, (0, add("9", "9C")))
    assert score() == (100, 300)  # a ninth card: its value, no second bonus


# -- R8: the opening minimum ----------------------------------------------------------------------

# (side's total at the start of the hand, minimum, melds worth exactly it, melds worth 5 less)
MINIMUMS = [
    (-5, 15, [["4H", "4S", "4D"]], None),
    (0, 50, [["QH", "QS", "QD"], ["4H", "4S", "4D", "4C"]], [["QH", "QS", "QD"], ["4H", "4S", "4D"]]),
    (1495, 50, [["QH", "QS", "QD"], ["4H", "4S", "4D", "4C"]], [["QH", "QS", "QD"], ["4H", "4S", "4D"]]),
    (1500, 90, [["AH", "AS", "AD"], ["KH", "KS", "KD"]], [["AH", "AS", "AD"], ["5H", "5S", "5D", "5C", "5H"]]),
    (2995, 90, [["AH", "AS", "AD"], ["KH", "KS", "KD"]], [["AH", "AS", "AD"], ["5H", "5S", "5D", "5C", "5H"]]),
    (
        3000,
        120,
        [["AH", "AS", "AD"], ["KH", "KS", "KD"], ["QH", "QS", "QD"]],
        [["AH", "AS", "AD"], ["KH", "KS", "KD", "KC"], ["5H", "5S", "5D"]],
    ),
    (
        9000,
        120,
        [["AH", "AS", "AD"], ["KH", "KS", "KD"], ["QH", "QS", "QD"]],
        [["AH", "AS", "AD"], ["KH", "KS", "KD", "KC"], ["5H", "5S", "5D"]],
    ),
]


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("total,minimum,enough,short", MINIMUMS, ids=[str(m[0]) for m in MINIMUMS])
def test_r8_opening_minimum_by_total(preset, total, minimum, enough, short):
    """R8. The side's total at the start of the hand sets its opening minimum: below 0: 15;
    0-1 495: 50; 1 500-2 995: 90; 3 000 or more: 120.

    "- Negatiivinen pistemäärä edellyttää 15 pistettä." (001)
    "- Pistemäärä 0–1 495 edellyttää 50 pistettä." (001)
    "- Pistemäärä 1 500–2 995 edellyttää 90 pistettä." (001)
    "- Pistemäärä 3 000 tai enemmän edellyttää 120 pistettä." (001)
    "Jos parillanne on 1 500 pistettä, avaukseen tarvitaan vähintään 90." (002)
    """
    from engine import resolve

    teams = resolve(preset).teams
    totals = [total] + [0] * (teams - 1)
    for melds, ok in ((enough, True), (short, False)):
        if melds is None:
            continue
        cards = [c for m in melds for c in m]
        state = start(preset, hands={0: cards}, totals=totals, stock=["8C"])
        assert state.minimums == (minimum,) + (50,) * (teams - 1)
        state = play(state, (0, draw()))
        if ok:
            after = play(state, (0, meld(*melds)))
            assert after.opened(0)
        else:
            illegal(state, 0, meld(*melds), "opening_minimum_not_met")
            # one meld at a time never opens either: the minimum is over one action
            illegal(state, 0, meld(melds[0]), "opening_minimum_not_met")


# -- R9: what counts toward the minimum ----------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r9_pile_top_counts_the_rest_does_not(preset):
    """R9. Taking the pile to open: its top card counts, the cards under it do not.

    "Jos nostat poistopakan avauksen yhteydessä, vain sen päällimmäisen kortin saa laskea mukaan. Poistopakan muut kortit eivät auta avausrajan täyttämisessä ennen nostoa." (002)
    "De to kortene man har på hånden og det øverste kortet i sakehaugen må man legge som en kombinasjon på bordet som bare er mulig om kombinasjonen gir nok poeng til å åpne." (004)
    """
    # the pile: AC (the upcard, 20) under KC: K K K = 30, with the ace it would be 50
    state = start(preset, hands={0: ["KC"], 1: ["KH", "KS", "QH", "QS", "QD"]}, upcards=["AC"], stock=["8C"])
    state = play(state, (0, draw()), (0, discard("KC")))
    illegal(state, 1, take("KH", "KS"), "opening_minimum_not_met")
    with_queens = take("KH", "KS", melds=[["QH", "QS", "QD"]])  # 30 + 30
    if state.rules.pile.opening_from_pile == "pile_meld_alone":
        illegal(state, 1, with_queens, "opening_minimum_not_met")
        return
    after = play(state, (1, with_queens))
    team = after.rules.team_of(1)
    assert meld_codes(after, team) == {"K": ["KC", "KH", "KS"], "Q": ["QD", "QH", "QS"]}
    assert hand(after, 1) == hand(state, 1) - Counter(["KH", "KS", "QH", "QS", "QD"]) + Counter(["AC"])


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r9_norwegian_the_pile_meld_opens_alone(preset):
    """R9 (norwegian). Before opening, the meld made with the pile's top card must reach the
    minimum by itself; more hand cards, wilds too, may join that meld, but other melds laid
    with the take do not count. Elsewhere they add up.

    "De to kortene man har på hånden og det øverste kortet i sakehaugen må man legge som en kombinasjon på bordet som bare er mulig om kombinasjonen gir nok poeng til å åpne." (004)
    "Saat laskea useita ilmoituksia yhteen rajan saavuttamiseksi." (001)
    """
    state = start(preset, hands={0: ["KH", "KS", "KD", "JK", "AH", "AS", "AD"]}, upcards=["KC"])
    alone = state.rules.pile.opening_from_pile == "pile_meld_alone"
    assert alone == (preset == "norwegian")
    with_aces = take("KH", "KS", "KD", melds=[["AH", "AS", "AD"]])  # kings 40, aces 60
    if alone:
        illegal(state, 0, with_aces, "opening_minimum_not_met")
        illegal(state, 0, take("KH", "KS", "KD"), "opening_minimum_not_met")
    else:
        play(state, (0, with_aces))
    after = play(state, (0, take("KH", "KS", "KD", "JK")))  # the kings with a joker: 90
    assert meld_codes(after, 0) == {"K": ["JK", "KC", "KD", "KH", "KS"]}
    play(state, (0, take("KH", "KS", "KD", "JK", melds=[["AH", "AS", "AD"]])))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r9_bonuses_never_count(preset):
    """R9. Only card values count: neither a canasta bonus nor red threes help.

    "Saat laskea useita ilmoituksia yhteen rajan saavuttamiseksi. Canastasta ja punaisista kolmosista saatavaa bonusta ei lasketa mukaan rajaan." (001)
    "Canastabonus ja punaisten kolmosten bonukset eivät auta sen täyttämisessä." (002)
    """
    fours = ["4H", "4S", "4D", "4C", "4H", "4S", "4D"]  # a natural canasta worth 35 points
    state = start(preset, hands={0: fours + ["3H", "QH", "QS", "QD"]}, stock=["8C", "8D", "8H"])
    state = play(state, (0, draw()))
    if state.rules.melding.red_threes_optional:
        state = play(state, (0, meld(["3H"])))
    assert len(state.red_threes[0]) == 1
    illegal(state, 0, meld(fours), "opening_minimum_not_met")
    after = play(state, (0, meld(fours, ["QH", "QS", "QD"])))  # 35 + 30: several melds add up
    assert after.canastas(0) == 1


# -- R10: taking an unfrozen pile ------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r10_take_an_unfrozen_pile_three_ways(preset):
    """R10. After opening, the top card is melded with two naturals, with a natural and a wild,
    or put on the side's meld of its rank; the whole rest of the pile goes to the hand.

    "Avopakan saa nostaa, jos käyttää sen päällimmäisen kortin välittömästi pöytäykseen kahden tai useamman samannumeroisen kortin (tai jokerin) kanssa. Avopakan saa ottaa myös silloin, jos sen päällimmäisen kortin voi pelata oman joukkueen pöytäykseen." (000)
    "Voit yhdistää avokortin kahteen samanarvoiseen käsikorttiin, samanarvoiseen käsikorttiin ja korvaavaan korttiin tai liittää sen parinne valmiiseen pöytäyhdistelmään. Yhdistelmän pitää säilyä kelvollisena." (002)
    "Et saa ottaa vain mieluisia kortteja ja jättää muita pöytään." (002)
    "Etter man har åpnet kan man ta inn sakehaugen om man kan bruke det øverste kortet i en kombinasjon på bordet. Enten i en eksisterende kombinasjon, eller man kan legge ut en ny." (004)
    """
    state, taker = after_opening(preset, taker_cards=["KD", "KH", "JK", "QH"])
    team = state.rules.team_of(taker)
    rest = Counter(code(k) for k in state.pile[:-1])
    for action in (take("KD", "KH"), take("KD", "JK")):
        after = play(state, (taker, action))
        assert sorted(meld_codes(after, team)["K"]) == sorted(["KC", *action["with"]])
        assert hand(after, taker) == hand(state, taker) - Counter(action["with"]) + rest
    illegal(state, taker, onto("K"), "no_meld_to_add")
    illegal(state, taker, take("KD"), "meld_too_small")
    illegal(state, taker, take("JK"), "meld_too_small")
    illegal(state, taker, take("QH", "KD"), "card_does_not_fit")
    illegal(state, taker, take("KS", "KD"), "cards_not_in_hand")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r10_take_onto_the_sides_meld(preset):
    """R10. The top card alone onto the side's meld of its rank (the partner's meld counts).

    "Avopakan saa ottaa myös silloin, jos sen päällimmäisen kortin voi pelata oman joukkueen pöytäykseen." (000)
    """
    state, taker = after_opening(
        preset, taker_cards=["KD", "JK"], opener_melds=(("AH", "AS", "AD"), ("KH", "KS", "KD"))
    )
    team = state.rules.team_of(taker)
    after = play(state, (taker, onto("K")))
    assert sorted(meld_codes(after, team)["K"]) == ["KC", "KD", "KH", "KS"]
    after = play(state, (taker, take("KD", "JK")))  # with cards, onto the same meld
    assert sorted(meld_codes(after, team)["K"]) == ["JK", "KC", "KD", "KD", "KH", "KS"]
    after = play(state, (taker, take("KD")))  # one natural is enough onto a meld
    assert len(meld_codes(after, team)["K"]) == 5
    illegal(state, taker, onto("Q"), "wrong_rank")
