"""Black threes, going out, asking the partner (with the R22 penalty), bonuses, concealed going out: R15-R19."""

from __future__ import annotations

import pytest

from engine import legal_actions, resolve
from tests.engine.helpers import (
    add,
    answer,
    ask,
    discard,
    draw,
    hand,
    illegal,
    meld,
    pass_,
    play,
    row,
    skip_stock,
    start,
    take,
)

KINGS = ["KH", "KS", "KD", "KC", "KH", "KS", "KD"]  # a natural canasta, 70 points
QUEENS = ["QH", "QS", "QD", "QC", "QH", "QS", "QD"]
FOURS = ["4H", "4S", "4D", "4C", "4H", "4S", "4D"]  # a natural canasta worth only 35

ALL_CONFIGS = [
    ("classic", 4), ("finnish", 4), ("finnish-2p", 2), ("finnish-3p", 3), ("bicycle", 4),
    ("wiki", 2), ("wiki", 3), ("wiki", 4), ("wiki", 6),
    ("norwegian", 2), ("norwegian", 3), ("norwegian", 4), ("norwegian", 5), ("norwegian", 6),
]
PARTNERSHIPS = [("classic", 4), ("finnish", 4), ("bicycle", 4), ("wiki", 4), ("wiki", 6), ("norwegian", 4)]
ALONE = [c for c in ALL_CONFIGS if c not in PARTNERSHIPS]


def dealt(preset: str, players: int | None, cards: list[str], **kw):
    """Seat 0 holds ``cards`` after its first draw: the first ones are dealt, the rest drawn."""
    overrides = kw.pop("overrides", None)
    rules = resolve(preset, players, overrides)
    n = rules.hand_size
    assert len(cards) == n + rules.draw_count, (len(cards), n + rules.draw_count)
    return start(preset, players, overrides=overrides, hands={0: cards[:n]}, stock=cards[n:], **kw)


# -- R15: black threes ----------------------------------------------------------------------------

R15_CONFIGS = [("classic", 4), ("finnish", 4), ("bicycle", 4), ("wiki", 4), ("wiki", 3), ("norwegian", 2), ("norwegian", 3)]


def _black_threehand(rules):
    """Seven kings, three black threes, a joker and a nine to discard, plus fillers to meld."""
    cards = KINGS + ["3S", "3C", "3S", "JK", "9H"]
    extra = rules.hand_size + rules.draw_count - len(cards)
    if extra >= 3:
        cards[7:7] = ["QH", "QS", "QD", "QC", "QH", "QS"][:extra]
    else:
        cards[7:7] = ["KC"][:extra]
        if extra == 2:
            cards.insert(-2, "3C")
    return cards


@pytest.mark.parametrize("preset,players", R15_CONFIGS)
def test_r15_black_threes_only_when_going_out(preset, players):
    """R15. Three or four black threes, without wilds, are melded only when going out.

    "Lopettaessaan saa pöydätä kolme tai neljä mustaa kolmosta ilman jokereita, muulloin niitä ei saa pöydätä." (000)
    "Pidä mustat kolmoset kädessäsi ja ilmoita ne vasta, kun puolesi lopettaa." (001)
    "Mustista kolmosista saa tehdä kolmen tai neljän kortin yhdistelmän vain lopettaessa, ilman korvaavia kortteja." (002)
    "Tre eller fire svarte treere kan legges som en kombinasjon på bordet, men bare akkurat når man går ut." (004)
    """
    rules = resolve(preset, players)
    cards = _black_threehand(rules)
    blacks = [c for c in cards if c[0] == "3"]
    naturals = [c for c in cards if c[0] in "KQ"]
    groups = [[c for c in naturals if c[0] == r] for r in "KQ"]
    state = play(dealt(preset, players, cards), (0, draw()), (0, meld(*[g for g in groups if g])))
    assert state.canastas(0) == 1  # going out is allowed from now on
    # left: the black threes, JK and 9H
    illegal(state, 0, meld(blacks), "black_threes_not_allowed")  # not going out: 2 cards left
    illegal(state, 0, meld(blacks[:2] + ["JK"]), "black_threes_not_allowed")  # no wilds
    illegal(state, 0, meld(blacks + ["JK"]), "black_threes_not_allowed")
    state = play(state, (0, add("K", "JK")))
    illegal(state, 0, meld(blacks[:2]), "black_threes_not_allowed")  # two are never enough
    after = play(state, (0, meld(blacks)))  # leaves 9H: the next move must go out
    assert sum(after.hands[0]) == 1
    after = play(after, (0, discard("9H")))
    assert after.hand_result["reason"] == "went_out" and after.hand_result["by"] == 0
    assert row(after, 0)["melds"] >= 5 * len(blacks)


# -- R16: going out needs the side's canastas ----------------------------------------------------------


def _one_canastahand(rules):
    """A canasta of kings and the rest of the hand in melds that are not canastas."""
    rest = rules.hand_size + rules.draw_count - 7
    sizes = {5: [5], 7: [4, 3], 8: [4, 4], 10: [5, 5]}[rest]
    groups = [KINGS]
    for rank, size in zip("QJ", sizes, strict=False):
        groups.append([rank + s for s in "HSDCHS"[:size]])
    return groups


@pytest.mark.parametrize("preset,players", ALL_CONFIGS)
def test_r16_going_out_needs_the_canastas(preset, players):
    """R16. Going out needs one canasta (two in finnish-2p, finnish-3p, wiki with 2 or 6, and
    norwegian partners); otherwise the player keeps a card to discard.

    "Pelin voi lopettaa pelaamalla viimeisen korttinsa kädestä pöytäämällä tai heitolla, kunhan oma joukkue on tehnyt vähintään yhden canastan." (000)
    "Kaksinpelissä pelaajille jaetaan 15 korttia, umpipakasta nostetaan kaksi korttia (vuoron lopussa heitetään pois silti vain yksi kortti) ja lopettamiseen tarvitaan kaksi canastaa." (000)
    "Canastan säännöt vaativat, että ilman valmista canastaa käteen jää vähintään yksi kortti." (002)
    "Om man spiller Canasta som et parspill, må spilleren og en makker ha to Canastaer for å være i stand til å gå ut. Om man spiller individuelt, må man bare ha en Canasta." (004)
    """
    rules = resolve(preset, players)
    groups = _one_canastahand(rules)
    state = play(dealt(preset, players, [c for g in groups for c in g]), (0, draw()))
    cut = next(i for i, g in enumerate(groups) if i and len(g) > 3)
    short = [g[:-1] if i == cut else g for i, g in enumerate(groups)]
    if rules.canastas_to_go_out == 1:
        after = play(state, (0, meld(*short)))
        assert sum(after.hands[0]) == 1 and after.phase == "play"
        after = play(state, (0, meld(*groups)))
        assert after.hand_result["reason"] == "went_out"
    else:
        illegal(state, 0, meld(*groups), "not_enough_canastas")
        illegal(state, 0, meld(*short), "must_keep_card")
        after = play(state, (0, meld(*groups[:-1])))  # keeping more than one card is fine
        assert sum(after.hands[0]) > 1


def _two_canastahand(rules):
    rest = rules.hand_size + rules.draw_count - 14
    groups = [KINGS, QUEENS] + ([["JH", "JS", "JD"]] if rest == 3 else [])
    if rest == 1:
        groups[0] = KINGS + ["KC"]
    return groups


@pytest.mark.parametrize("preset,players", [("finnish-2p", 2), ("finnish-3p", 3), ("wiki", 2), ("wiki", 6)])
def test_r16_two_canastas_in_one_turn(preset, players):
    """R16. Two canastas completed in the going-out turn are enough.

    "Canastan lopetus on sallittu, kun parillanne on vähintään yksi valmis canasta tai saat sen valmiiksi samalla vuorolla." (002)
    """
    groups = _two_canastahand(resolve(preset, players))
    state = play(dealt(preset, players, [c for g in groups for c in g]), (0, draw()))
    after = play(state, (0, meld(*groups)))
    assert after.hand_result["reason"] == "went_out"


def _norwegian_partners(seat2_melds: bool, last_draw: bool = True):
    """norwegian, four players: seat 0 lays a canasta of kings; seat 2 a canasta of queens
    (or nothing); seat 0 then draws the fifth nine (unless ``last_draw`` is false)."""
    state = start(
        "norwegian",
        hands={0: KINGS + ["9H", "9S", "9D", "9C"], 2: QUEENS},
        stock=["6D", "7D", "8D", "4D", "9H"],
    )
    state = play(state, (0, draw()), (0, meld(KINGS)), (0, discard("6D")), (1, draw()), (1, discard("7D")))
    state = play(state, (2, draw()))
    if seat2_melds:
        state = play(state, (2, meld(QUEENS)))
    state = play(state, (2, discard("8D")), (3, draw()), (3, discard("4D")))
    return play(state, (0, draw())) if last_draw else state


def test_r16_norwegian_partners_need_two_canastas():
    """R16 (norwegian partners): the partner's canasta is the second one.

    "Om man spiller Canasta som et parspill, må spilleren og en makker ha to Canastaer for å være i stand til å gå ut." (004)
    """
    nines = ["9H", "9S", "9D", "9C", "9H"]
    state = _norwegian_partners(seat2_melds=False)
    illegal(state, 0, meld(nines), "not_enough_canastas")
    illegal(state, 0, meld(nines[:4]), "must_keep_card")
    state = _norwegian_partners(seat2_melds=True)
    after = play(state, (0, meld(nines)))
    assert after.hand_result["reason"] == "went_out"
    assert row(after, 0)["going_out"] == 100  # seat 0 had melded before: not concealed


# -- R17: "partner, may I go out?" --------------------------------------------------------------------


def able(preset: str, players: int | None = None):
    """A state where seat 0 is about to draw and can then go out, the going-out moves, and a
    meld that does not go out."""
    rules = resolve(preset, players)
    if rules.canastas_to_go_out == 2 and rules.team_size == 2:  # norwegian partners
        state = _norwegian_partners(seat2_melds=True, last_draw=False)
        return state, [meld(["9H", "9S", "9D", "9C", "9H"])], meld(["9H", "9S", "9D"])
    if rules.canastas_to_go_out == 2:
        groups = _two_canastahand(rules)
        return dealt(preset, players, [c for g in groups for c in g]), [meld(*groups)], meld(KINGS)
    if rules.hand_size + rules.draw_count == 12:
        cards = KINGS + ["QH", "QS", "QD", "9H", "QC"]
        return dealt(preset, players, cards), [meld(KINGS, ["QH", "QS", "QD", "QC"]), discard("9H")], meld(KINGS)
    groups = _one_canastahand(rules)
    return dealt(preset, players, [c for g in groups for c in g]), [meld(*groups)], meld(KINGS)


@pytest.mark.parametrize("preset,players", PARTNERSHIPS)
def test_r17_when_to_ask(preset, players):
    """R17. Only after a stock draw and before any meld (bicycle: also before the draw, but
    never after a meld or a pile take). The next partner in playing order answers.

    "Lupaa saa kysyä vain silloin, kun on vuoronsa aluksi nostanut kortin umpipakasta." (000)
    "Kun canastan lopetus tulee mahdolliseksi, voit kysyä pariltasi ”Saanko lopettaa?” ennen nostoa tai sen jälkeen. Kysy kuitenkin ennen kuin pelaat yhdistelmiin kortteja tai ilmaiset aikovasi nostaa poistopakan." (002)
    "Saat kysyä pariltasi lupaa lopettamiseen, mutta saat myös lopettaa kysymättä. Jos kysyt, vastaus on sitova." (001)
    """
    state, moves, partial = able(preset, players)
    rules = state.rules
    partner = rules.partners(0)[0]
    if rules.ask_go_out == "before_or_after_draw":
        asked = play(state, (0, ask()))
        assert asked.phase == "answer" and asked.to_act == partner
        back = play(asked, (partner, answer(True)))
        assert back.phase == "draw" and back.to_act == 0
        play(back, (0, draw()), *[(0, m) for m in moves])
    else:
        illegal(state, 0, ask(), "ask_too_early")
    drawn = play(state, (0, draw()))
    asked = play(drawn, (0, ask()))
    assert asked.to_act == partner and asked.turn == 0
    illegal(asked, 0, discard("9H"), "awaiting_answer")
    other = next(p for p in range(rules.players) if p not in (0, partner))
    illegal(asked, other, answer(True), "not_your_turn")
    back = play(asked, (partner, answer(True)))
    illegal(back, 0, ask(), "already_asked")
    illegal(drawn, 0, answer(True), "no_question")
    melded = play(drawn, (0, partial))
    illegal(melded, 0, ask(), "ask_too_late")


@pytest.mark.parametrize("preset", ["classic", "finnish", "bicycle", "wiki", "norwegian"])
def test_r17_no_asking_after_a_pile_take(preset):
    """R17. Taking the pile melds its top card: too late to ask.

    "Kysy kuitenkin ennen kuin pelaat yhdistelmiin kortteja tai ilmaiset aikovasi nostaa poistopakan." (002)
    """
    state = start(preset, hands={0: ["KH", "KS", "AH", "AS", "AD"]}, upcards=["KC"])
    state = play(state, (0, take("KH", "KS", melds=[["AH", "AS", "AD"]])))
    illegal(state, 0, ask(), "ask_too_late")


@pytest.mark.parametrize("preset,players", PARTNERSHIPS)
def test_r17_answers_bind(preset, players):
    """R17. After "no" the player may not go out this turn; after "yes" the player must go out
    while going out is possible.

    "Pari saa vastata ”kyllä” tai ”ei”, ja vastaus on sitova, eli peli on lopetettava jos pari antaa luvan ja jatkettava, jos pari kieltää lopettamasta." (000)
    "Peliparisi kyllä- tai ei-vastaus sitoo sinua." (002)
    """
    state, moves, partial = able(preset, players)
    partner = state.rules.partners(0)[0]
    asked = play(state, (0, draw()), (0, ask()))
    no = play(asked, (partner, answer(False)))
    assert no.permission == 0
    if moves[-1]["type"] == "discard":
        # the meld would leave one card, which could only be discarded by going out
        illegal(no, 0, moves[0], "must_keep_card")
    else:
        illegal(no, 0, moves[0], "go_out_refused")
    kept = play(no, (0, partial))  # a normal turn goes on
    card = next(c for c, n in hand(kept, 0).items() if n)
    kept = play(kept, (0, discard(card)))
    assert kept.turn == 1 and kept.hand_result is None
    yes = play(asked, (partner, answer(True)))
    for card in hand(yes, 0):
        illegal(yes, 0, discard(card), "must_go_out")
    out = play(yes, *[(0, m) for m in moves])
    assert out.hand_result["reason"] == "went_out"


@pytest.mark.parametrize("preset,players", PARTNERSHIPS)
def test_r17_asking_while_unable(preset, players):
    """R17/R22. Asking while unable to go out: a 100-point penalty in finnish, an illegal
    move elsewhere.

    "Tavallisimpia virheitä ovat punaisten kolmosten jättäminen käteen (500 sakkopistettä) ja lopetusluvan kysyminen ilman, että pystyy lopettamaan (100 sakkopistettä)." (000)
    "Kun canastan lopetus tulee mahdolliseksi, voit kysyä pariltasi ”Saanko lopettaa?” ennen nostoa tai sen jälkeen." (002)
    """
    state = start(preset, players, stock=["9C"])
    state = play(state, (0, draw()))
    rules = state.rules
    if rules.ask_unable_penalty:
        asked = play(state, (0, ask()))
        assert asked.penalties[rules.team_of(0)] == 100
        assert {"type": "ask_go_out"} not in legal_actions(state, 0)  # never suggested
        # the hand ends on an empty stock: the penalty is in the score
        after = play(asked, (rules.partners(0)[0], answer(True)), (0, discard("9C")))
        after = play(skip_stock(after, 0), (1, pass_()))
        assert row(after, 0)["penalties"] == -100 and row(after, 1)["penalties"] == 0
        assert row(after, 0)["hand_total"] == sum(
            row(after, 0)[k] for k in ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand")
        )
    else:
        illegal(state, 0, ask(), "cannot_go_out")


@pytest.mark.parametrize("preset,players", ALONE)
def test_r17_no_partner_to_ask(preset, players):
    """R17. Only partnerships ask.

    "Saat kysyä pariltasi lupaa lopettamiseen, mutta saat myös lopettaa kysymättä." (001)
    """
    state = play(start(preset, players), (0, draw()))
    illegal(state, 0, ask(), "no_partner")


# -- R18/R19: going-out bonuses, concealed going out -------------------------------------------------------

ONE_CANASTA_4P = ["classic", "finnish", "bicycle", "wiki"]


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r18_going_out_100_after_earlier_melds(preset):
    """R18. Going out earns 100; no bonus for the other side.

    "Aidoista canastoista saa 500 pisteen bonuksen, sekacanastoista 300 pisteen bonuksen, lopetuksesta 100 pistettä, suorasta lopettamisesta 200 pistettä ja punaisista kolmosista 100 pistettä." (000)
    "Tavallisesta lopetuksesta saa 100 pistettä." (002)
    """
    state = start(preset, hands={0: KINGS + ["QH", "QS", "QD", "9H"]}, stock=["5D", "6D", "7D", "8D", "QC"])
    state = play(
        state,
        (0, draw()), (0, meld(KINGS)), (0, discard("5D")),
        (1, draw()), (1, discard("6D")),
        (2, draw()), (2, discard("7D")),
        (3, draw()), (3, discard("8D")),
        (0, draw()), (0, meld(["QH", "QS", "QD", "QC"])), (0, discard("9H")),
    )
    assert state.hand_result["reason"] == "went_out"
    assert row(state, 0)["going_out"] == 100 and row(state, 1)["going_out"] == 0


@pytest.mark.parametrize("preset,players", [c for c in ALL_CONFIGS if c != ("norwegian", 4)])
def test_r18_concealed_going_out_200(preset, players):
    """R18/R19. Laying the whole hand in one turn with a canasta, nothing melded before: 200
    in all (not 100 + 200).

    "Lopetus antaa 100 pistettä, ja piilotettu lopetus antaa 100 pistettä lisää. Piilotettu lopetus tarkoittaa koko käden pelaamista yhdellä vuorolla canastan kanssa ilman aiempaa ilmoitusta." (001)
    "Käsilopetus antaa toiset 100 pistettä, siis yhteensä 200." (002)
    """
    state, moves, _ = able(preset, players)
    out = play(state, (0, draw()), *[(0, m) for m in moves])
    assert out.hand_result["reason"] == "went_out"
    assert row(out, 0)["going_out"] == 200


# (preset, minimum met by a stock draw?, by a pile take?)
WAIVED = [("classic", False, False), ("wiki", False, False), ("finnish", True, True), ("bicycle", True, False)]


@pytest.mark.parametrize("preset,after_draw,after_take", WAIVED)
def test_r19_concealed_going_out_and_the_minimum(preset, after_draw, after_take):
    """R19. A concealed going out worth 55 points when the side needs 90: the minimum is waived
    in finnish, in bicycle only after a stock draw, and applies in classic (and wiki).

    "Pelaajan on tällöin pöydättävä lopetukseen vaadittava canasta, mutta avauspöytäyksen minimipistemäärällä ei ole merkitystä." (000)
    "Suljetusta nostopakasta nostamisen jälkeen käsilopetus ei vaadi avausrajan täyttämistä. Poistopakan nostamisen yhteydessä avausraja on täytettävä tavalliseen tapaan ilman canastabonusta." (002)
    "Piilotettu lopetus tarkoittaa koko käden pelaamista yhdellä vuorolla canastan kanssa ilman aiempaa ilmoitusta." (001)
    """
    totals = [1500, 0]
    state = start(preset, hands={0: FOURS + ["5H", "5S", "5D", "9H"]}, stock=["5C"], totals=totals)
    assert state.minimums[0] == 90
    state = play(state, (0, draw()))
    going = meld(FOURS, ["5H", "5S", "5D", "5C"])
    if after_draw:
        out = play(state, (0, going), (0, discard("9H")))
        assert row(out, 0)["going_out"] == 200 and row(out, 0)["melds"] == 55
    else:
        illegal(state, 0, going, "opening_minimum_not_met")
    # the same after taking the pile (the upcard 5C)
    state = start(preset, hands={0: FOURS + ["5H", "5S", "5D", "9H"]}, upcards=["5C"], totals=totals)
    going = take("5H", "5S", "5D", melds=[FOURS])
    if after_take:
        out = play(state, (0, going), (0, discard("9H")))
        assert row(out, 0)["going_out"] == 200
    else:
        illegal(state, 0, going, "opening_minimum_not_met")
    # an ordinary opening still needs the minimum everywhere
    state = play(start(preset, hands={0: FOURS + ["5H", "5S", "5D", "9H"]}, stock=["5C"], totals=totals), (0, draw()))
    illegal(state, 0, meld(FOURS), "opening_minimum_not_met")


@pytest.mark.parametrize("preset,concealed", [("classic", True), ("bicycle", True), ("wiki", True), ("finnish", False)])
def test_r19_partner_melded_earlier(preset, concealed):
    """R19. The partner melded earlier in the hand: still concealed where only the player's own
    melds count (classic, bicycle, wiki); not in finnish, where neither partner may have melded.

    "Suora lopetus on sellainen, jossa pelaaja pöytää kerralla kaikki korttinsa ilman, että kumpikaan parista on pöydännyt mitään." (000)
    "Et ole saanut aiemmin pelata omia yhdistelmiä etkä lisätä kortteja parisi yhdistelmiin." (002)
    """
    state = start(
        preset,
        hands={0: ["AH", "AS", "AD"], 2: KINGS + ["QH", "QS", "QD", "9H"]},
        stock=["5D", "6D", "QC"],
    )
    state = play(
        state,
        (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("5D")),
        (1, draw()), (1, discard("6D")),
        (2, draw()), (2, meld(KINGS, ["QH", "QS", "QD", "QC"])), (2, discard("9H")),
    )
    assert state.hand_result["by"] == 2
    assert row(state, 0)["going_out"] == (200 if concealed else 100)


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r19_a_later_turn_is_not_concealed(preset):
    """R19. Emptying the hand in a later turn, after one's own melds, is an ordinary going out.

    "Pelkkä käden tyhjentäminen yhdellä myöhemmällä vuorolla ei riitä tähän bonukseen." (002)
    """
    state = start(preset, hands={0: ["AH", "AS", "AD"] + KINGS + ["9H"]}, stock=["5D", "6D", "7D", "8D", "AC"])
    state = play(
        state,
        (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("5D")),
        (1, draw()), (1, discard("6D")), (2, draw()), (2, discard("7D")), (3, draw()), (3, discard("8D")),
        (0, draw()), (0, meld(KINGS)), (0, add("A", "AC")), (0, discard("9H")),
    )
    assert state.hand_result["reason"] == "went_out"
    assert row(state, 0)["going_out"] == 100


# -- R18 (wiki): hidden canastas ---------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["wiki", "classic", "finnish", "bicycle"])
def test_r18_hidden_canasta(preset):
    """R18 (wiki). A canasta laid whole from the hand, or with only the pile's top card, earns
    100 more (600 natural, 400 mixed), for any side; one built by adding does not. Other
    presets have no such bonus.

    "Piilotettu kanasta voi olla luonnollinen tai sekoitettu, ja sen bonuspiste on 100 pistettä (siis 400 piilotetulle sekoitetulle kanankalle ja 600 piilotetulle luonnonkanavalle)." (003)
    """
    extra = 100 if preset == "wiki" else 0
    # laid whole from the hand (seat 0, natural) and with the pile's top card (seat 1, mixed)
    mixed = ["QH", "QS", "QD", "QC", "JK", "2C"]
    state = start(
        preset,
        hands={0: KINGS + ["AH", "AS", "AD", "9H"], 1: mixed + ["AC", "AH", "AS"]},
        stock=["5D"],
    )
    state = play(state, (0, draw()), (0, meld(KINGS, ["AH", "AS", "AD"])))
    assert row_now(state, 0)["canasta_bonus"] == 500 + extra
    state = start(
        preset,
        hands={0: ["QH"], 1: mixed + ["AC", "AH", "AS"]},
        stock=["5D"],
    )
    state = play(state, (0, draw()), (0, discard("QH")))
    state = play(state, (1, take("QH", "QS", "QD", "QC", "JK", "2C")))
    assert row_now(state, 1)["canasta_bonus"] == 300 + extra
    assert row_now(state, 0)["canasta_bonus"] == 0
    # built by adding the seventh card: no extra
    state = start(preset, hands={0: KINGS + ["9H"]}, stock=["5D"])
    state = play(state, (0, draw()), (0, meld(KINGS[:6])), (0, add("K", KINGS[6])))
    assert row_now(state, 0)["canasta_bonus"] == 500


def row_now(state, team):
    from engine.scoring import score_hand

    return score_hand(state, "stock_exhausted", 0, False)[team]


@pytest.mark.parametrize("preset", ["bicycle", "classic", "wiki", "finnish"])
def test_r19_adding_to_the_partners_meld_counts_as_melding(preset):
    """R19. A player who added a card to the partner's meld earlier in the hand no longer goes
    out concealed.

    "Et ole saanut aiemmin pelata omia yhdistelmiä etkä lisätä kortteja parisi yhdistelmiin." (002)
    """
    state = start(
        preset,
        hands={0: ["AH", "AS", "AD"], 2: ["AC"] + KINGS + ["QH", "QS", "QD"]},
        stock=["5D", "6D", "7D", "8D", "4D", "6C", "QC"],
    )
    state = play(
        state,
        (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("5D")),
        (1, draw()), (1, discard("6D")),
        (2, draw()), (2, add("A", "AC")), (2, discard("7D")),
        (3, draw()), (3, discard("8D")),
        (0, draw()), (0, discard("4D")),
        (1, draw()), (1, discard("6C")),
        (2, draw()), (2, meld(KINGS, ["QH", "QS", "QD", "QC"])),
    )
    assert state.hand_result["reason"] == "went_out" and state.hand_result["by"] == 2
    assert row(state, 0)["going_out"] == 100


def test_r17_bicycle_no_before_the_draw_binds_the_whole_turn():
    """R17 (bicycle): asked before the draw, a "no" still binds after the draw.

    "Peliparisi kyllä- tai ei-vastaus sitoo sinua." (002)
    """
    state, moves, partial = able("bicycle")
    state = play(state, (0, ask()), (2, answer(False)), (0, draw()))
    illegal(state, 0, moves[0], "must_keep_card")
    play(state, (0, partial))


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r17_able_when_a_wild_completes_a_meld_on_the_table(preset):
    """R17/R16. "Able to go out" counts a wild that completes a canasta on the table even when
    another meld of the side has room for it: asking is legal (no penalty in finnish), and
    after "yes" a discard that does not go out is refused.

    "Canastan lopetus on sallittu, kun parillanne on vähintään yksi valmis canasta tai saat sen valmiiksi samalla vuorolla." (002)
    "Pari saa vastata ”kyllä” tai ”ei”, ja vastaus on sitova, eli peli on lopetettava jos pari antaa luvan ja jatkettava, jos pari kieltää lopettamasta." (000)
    """
    six_kings = KINGS[:6]
    aces = ["AH", "AS", "AD", "AC"]
    state = start(preset, hands={0: six_kings + aces + ["JK"]}, stock=["9H", "6D", "7D", "8D", "5C"])
    state = play(
        state,
        (0, draw()), (0, meld(six_kings, aces)), (0, discard("9H")),
        (1, draw()), (1, discard("6D")), (2, draw()), (2, discard("7D")), (3, draw()), (3, discard("8D")),
        (0, draw()),
    )
    assert sorted(state.hands[0]) and sum(state.hands[0]) == 2  # JK and 5C
    asked = play(state, (0, ask()))
    assert asked.penalties == (0, 0)
    yes = play(asked, (2, answer(True)))
    illegal(yes, 0, discard("5C"), "must_go_out")
    illegal(yes, 0, discard("JK"), "must_go_out")
    out = play(yes, (0, add("K", "JK")), (0, discard("5C")))
    assert out.hand_result["reason"] == "went_out" and row(out, 0)["going_out"] == 100


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r17_yes_cannot_be_thrown_away_by_melding(preset):
    """R17. After "yes" a meld that leaves the player unable to go out is refused too, not only
    a discard: seven kings, 9H 9S, 2C and 5H go out as kings + 9-9-2 + discard 5H, but kings
    with the 2 would strand the nines.

    "Pari saa vastata ”kyllä” tai ”ei”, ja vastaus on sitova, eli peli on lopetettava jos pari antaa luvan ja jatkettava, jos pari kieltää lopettamasta." (000)
    """
    kings = ["KH", "KS", "KD", "KC", "KH", "KS", "KD"]
    state = start(preset, hands={0: kings + ["9H", "9S", "2C", "5H"]}, stock=["KC"])
    state = play(state, (0, draw()))
    asked = play(state, (0, ask()))
    yes = play(asked, (2, answer(True)))
    illegal(yes, 0, meld(kings + ["KC", "2C"]), "must_go_out")
    out = play(yes, (0, meld(kings + ["KC"], ["9H", "9S", "2C"])), (0, discard("5H")))
    assert out.hand_result["reason"] == "went_out"
