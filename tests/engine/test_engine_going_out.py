"""Black threes, going out, asking the partner (with the R22 penalty), bonuses, concealed going out: R15-R19."""

from __future__ import annotations

import pytest

from engine import code, legal_actions, legal_summary, resolve
from tests.engine.helpers import (
    add,
    after_opening,
    answer,
    ask,
    discard,
    draw,
    hand,
    hand_list,
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
ONE_CANASTA_4P = ["classic", "finnish", "bicycle", "wiki"]


def dealt(preset: str, players: int | None, cards: list[str], **kw):
    """Seat 0 holds ``cards`` after its first draw: the first ones are dealt, the rest drawn."""
    overrides = kw.pop("overrides", None)
    rules = resolve(preset, players, overrides)
    n = rules.dealing.hand_size
    assert len(cards) == n + rules.dealing.draw_count, (len(cards), n + rules.dealing.draw_count)
    return start(preset, players, overrides=overrides, hands={0: cards[:n]}, stock=cards[n:], **kw)


# -- R15: black threes ----------------------------------------------------------------------------

R15_CONFIGS = [("classic", 4), ("finnish", 4), ("bicycle", 4), ("wiki", 4), ("wiki", 3), ("norwegian", 2), ("norwegian", 3)]


def _black_threehand(rules):
    """Seven kings, three black threes, a joker and a nine to discard, plus fillers to meld."""
    cards = KINGS + ["3S", "3C", "3S", "JK", "9H"]
    extra = rules.dealing.hand_size + rules.dealing.draw_count - len(cards)
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


@pytest.mark.parametrize("never", [False, True])
def test_house_rule_black_threes_never_meld(never):
    """R15 as a house rule: ``black_three_meld_on_going_out`` false. Black threes are then never
    melded, not even to go out: three of them and a last card can only be got rid of one a turn."""
    overrides = {"black_three_meld_on_going_out": False} if never else None
    rules = resolve("classic", overrides=overrides)
    cards = _black_threehand(rules)
    blacks = [c for c in cards if c[0] == "3"]
    kings = [c for c in cards if c[0] == "K"]
    state = play(dealt("classic", None, cards, overrides=overrides), (0, draw()), (0, meld(kings)),
                 (0, add("K", "JK")))
    assert sorted(hand_list(state, 0)) == sorted(blacks + ["9H"]) and state.canastas(0) == 1
    assert (legal_summary(state, 0)["go_out"] is None) is never  # the plan to go out
    assert any(a["type"] == "meld" for a in legal_actions(state, 0)) is not never
    if never:
        illegal(state, 0, meld(blacks), "black_threes_not_allowed")
    else:
        assert play(state, (0, meld(blacks)), (0, discard("9H"))).hand_result["reason"] == "went_out"


# -- R16: going out needs the side's canastas ----------------------------------------------------------


def _one_canastahand(rules):
    """A canasta of kings and the rest of the hand in melds that are not canastas."""
    rest = rules.dealing.hand_size + rules.dealing.draw_count - 7
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
    if rules.going_out.canastas_to_go_out == 1:
        after = play(state, (0, meld(*short)))
        assert sum(after.hands[0]) == 1 and after.phase == "play"
        after = play(state, (0, meld(*groups)))
        assert after.hand_result["reason"] == "went_out"
    else:
        illegal(state, 0, meld(*groups), "not_enough_canastas")
        illegal(state, 0, meld(*short), "must_keep_card")
        after = play(state, (0, meld(*groups[:-1])))  # keeping more than one card is fine
        assert sum(after.hands[0]) > 1


SIX_SEVENS = ["7H", "7S", "7D", "7C", "7H", "7S"]


def _six_sevens(preset: str, seventh: str = "7D"):
    """Seat 0 opens with six sevens and three queens, keeping QS and ``seventh``; a round later
    it draws QH: its hand is QS QH and ``seventh``, its side has no canasta."""
    state = start(
        preset,
        hands={0: SIX_SEVENS + ["QH", "QD", "QC", "QS", seventh]},
        stock=["5D", "6D", "8D", "9D", "QH"],
    )
    state = play(
        state,
        (0, draw()), (0, meld(SIX_SEVENS, ["QH", "QD", "QC"])), (0, discard("5D")),
        (1, draw()), (1, discard("6D")), (2, draw()), (2, discard("8D")), (3, draw()), (3, discard("9D")),
        (0, draw()),
    )
    assert hand_list(state, 0) == sorted(["QS", "QH", seventh]) and state.canastas(0) == 0
    return state


def _adds(state, seat, rank):
    return [a for a in legal_actions(state, seat) if a["type"] == "add" and a["rank"] == rank]


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r16_a_last_card_that_completes_a_canasta(preset):
    """R16. A move may leave one card when that card can still go out this turn: adding the
    queens leaves 7D, which completes the side's first canasta and empties the hand. The
    same move is refused when the last card cannot go out (9H fits no meld), and after a
    partner's "no". apply, the enumerator and the summary agree.

    "Puolesi lopettaa, kun kätesi on tyhjä ja puolellasi on vähintään yksi canasta." (001)
    "Canastan lopetus on sallittu, kun parillanne on vähintään yksi valmis canasta tai saat sen valmiiksi samalla vuorolla." (002)
    "Canastan säännöt vaativat, että ilman valmista canastaa käteen jää vähintään yksi kortti." (002)
    """
    queens = add("Q", "QS", "QH")
    state = _six_sevens(preset)
    assert any(sorted(a["cards"]) == ["QH", "QS"] for a in _adds(state, 0, "Q"))
    assert "Q" in legal_summary(state, 0)["add_ranks"]
    one = play(state, (0, queens))
    assert hand_list(one, 0) == ["7D"] and one.phase == "play"
    assert all(a == add("7", "7D") for a in legal_actions(one, 0))  # a discard would go out without a canasta
    out = play(one, (0, add("7", "7D")))
    assert out.hand_result["reason"] == "went_out" and out.hand_result["by"] == 0
    # the last card cannot go out: keep two cards
    stuck = _six_sevens(preset, seventh="9H")
    illegal(stuck, 0, queens, "must_keep_card")
    assert not any(sorted(a["cards"]) == ["QH", "QS"] for a in _adds(stuck, 0, "Q"))
    if stuck.rules.going_out.ask_go_out == "after_stock_draw_before_discard":
        # the partner's "no" (finnish asks at any time before the discard): 7D may not go out
        refused = play(state, (0, ask()), (2, answer(False)))
        illegal(refused, 0, queens, "must_keep_card")


def _two_canastahand(rules):
    rest = rules.dealing.hand_size + rules.dealing.draw_count - 14
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
    if rules.going_out.canastas_to_go_out == 2 and rules.team_size == 2:  # norwegian partners
        state = _norwegian_partners(seat2_melds=True, last_draw=False)
        return state, [meld(["9H", "9S", "9D", "9C", "9H"])], meld(["9H", "9S", "9D"])
    if rules.going_out.canastas_to_go_out == 2:
        groups = _two_canastahand(rules)
        return dealt(preset, players, [c for g in groups for c in g]), [meld(*groups)], meld(KINGS)
    if rules.dealing.hand_size + rules.dealing.draw_count == 12:
        cards = KINGS + ["QH", "QS", "QD", "9H", "QC"]
        return dealt(preset, players, cards), [meld(KINGS, ["QH", "QS", "QD", "QC"]), discard("9H")], meld(KINGS)
    groups = _one_canastahand(rules)
    return dealt(preset, players, [c for g in groups for c in g]), [meld(*groups)], meld(KINGS)


@pytest.mark.parametrize("preset,players", PARTNERSHIPS)
def test_r17_when_to_ask(preset, players):
    """R17. After a stock draw and before any meld (finnish: at any time of that turn before the
    discard; bicycle: also before the draw, but never after a meld or a pile take). The next
    partner in playing order answers.

    "Lupaa saa kysyä vain silloin, kun on vuoronsa aluksi nostanut kortin umpipakasta." (000)
    "Kun canastan lopetus tulee mahdolliseksi, voit kysyä pariltasi ”Saanko lopettaa?” ennen nostoa tai sen jälkeen. Kysy kuitenkin ennen kuin pelaat yhdistelmiin kortteja tai ilmaiset aikovasi nostaa poistopakan." (002)
    "Saat kysyä pariltasi lupaa lopettamiseen, mutta saat myös lopettaa kysymättä. Jos kysyt, vastaus on sitova." (001)
    """
    state, moves, partial = able(preset, players)
    rules = state.rules
    partner = rules.partners(0)[0]
    if rules.going_out.ask_go_out == "before_melds_or_pile_take":
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
    if rules.going_out.ask_go_out == "after_stock_draw_before_discard":
        play(melded, (0, ask()))
        assert {"type": "ask_go_out"} in legal_actions(melded, 0)
    else:
        illegal(melded, 0, ask(), "ask_too_late")
        assert {"type": "ask_go_out"} not in legal_actions(melded, 0)


@pytest.mark.parametrize("preset", ONE_CANASTA_4P)
def test_r17_finnish_asks_until_the_discard(preset):
    """R17 (finnish). In a turn that began with a stock draw the question may come after melds,
    at any time before the discard; elsewhere only before any meld. It may not come with one
    card left: that card leaves only by going out, so a "no" could not be obeyed.

    "Lupaa saa kysyä vain silloin, kun on vuoronsa aluksi nostanut kortin umpipakasta." (000)
    "Pari saa vastata ”kyllä” tai ”ei”, ja vastaus on sitova, eli peli on lopetettava jos pari antaa luvan ja jatkettava, jos pari kieltää lopettamasta." (000)
    """
    state = play(_six_sevens(preset), (0, add("Q", "QS")))  # a meld this turn; QH and 7D left
    if state.rules.going_out.ask_go_out != "after_stock_draw_before_discard":
        illegal(state, 0, ask(), "ask_too_late")
        return
    assert {"type": "ask_go_out"} in legal_actions(state, 0)
    yes = play(state, (0, ask()), (2, answer(True)))
    illegal(yes, 0, discard("QH"), "must_go_out")
    out = play(yes, (0, add("Q", "QH")), (0, add("7", "7D")))
    assert out.hand_result["reason"] == "went_out"
    last = play(state, (0, add("Q", "QH")))
    illegal(last, 0, ask(), "ask_too_late")


@pytest.mark.parametrize("preset", ["classic", "finnish", "bicycle", "wiki", "norwegian"])
def test_r17_no_asking_after_a_pile_take(preset):
    """R17. Taking the pile melds its top card: too late to ask.

    "Kysy kuitenkin ennen kuin pelaat yhdistelmiin kortteja tai ilmaiset aikovasi nostaa poistopakan." (002)
    """
    state = start(preset, hands={0: ["KH", "KS", "KD", "JK"]}, upcards=["KC"])
    state = play(state, (0, take("KH", "KS", "KD", "JK")))  # 90 in one meld: opens everywhere
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
    if rules.going_out.ask_unable_penalty:
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
        # one meld at a time will do: the turn is then bound to end by going out
        fours = play(state, (0, meld(FOURS)))
        only = legal_actions(fours, 0)
        assert fours.minimum_waived and len(only) == 1 and sorted(only[0]["melds"][0]) == ["5C", "5D", "5H", "5S"]
        illegal(fours, 0, discard("9H"), "must_go_out")
        out = play(fours, (0, meld(["5H", "5S", "5D", "5C"])), (0, discard("9H")))
        assert row(out, 0)["going_out"] == 200
    else:
        illegal(state, 0, going, "opening_minimum_not_met")
        illegal(state, 0, meld(FOURS), "opening_minimum_not_met")
    # the same after taking the pile (the upcard 5C)
    state = start(preset, hands={0: FOURS + ["5H", "5S", "5D", "9H"]}, upcards=["5C"], totals=totals)
    going = take("5H", "5S", "5D", melds=[FOURS])
    if after_take:
        out = play(state, (0, going), (0, discard("9H")))
        assert row(out, 0)["going_out"] == 200
    else:
        illegal(state, 0, going, "opening_minimum_not_met")
    # a meld below the minimum that cannot lead to going out needs the minimum everywhere
    state = start(preset, hands={0: FOURS + ["5H", "5S", "8D", "9H"]}, stock=["5C"], totals=totals)
    illegal(play(state, (0, draw())), 0, meld(FOURS), "opening_minimum_not_met")


SIX_FOURS = FOURS[:6]


# the hand that goes out with a take of three fives: six fours and a 2 make one canasta; in
# two-canasta games the fives (eight with the upcard) make the second
PILE_CONCEALED = {
    "finnish": SIX_FOURS + ["2C", "5H", "5S", "5D", "9H"],
    "finnish-2p": SIX_FOURS + ["2C", "5H", "5S", "5D", "5C", "5H", "5S", "5D", "9H"],
    "bicycle": SIX_FOURS + ["2C", "5H", "5S", "5D", "9H"],
    "classic": SIX_FOURS + ["2C", "5H", "5S", "5D", "9H"],
}


@pytest.mark.parametrize("preset", list(PILE_CONCEALED))
def test_r19_concealed_going_out_may_begin_with_a_pile_take(preset):
    """R19 (finnish, -2p, -3p). The straight going out waives the minimum also in a turn that
    begins by taking the pile: the take is allowed below the minimum while going out stays
    possible, and the turn must then end by going out (a discard that does not go out, or a
    move that makes going out impossible, is refused). bicycle and classic keep the minimum.

    "Suora lopetus on sellainen, jossa pelaaja pöytää kerralla kaikki korttinsa ilman, että kumpikaan parista on pöydännyt mitään. Pelaajan on tällöin pöydättävä lopetukseen vaadittava canasta, mutta avauspöytäyksen minimipistemäärällä ei ole merkitystä." (000)
    "Poistopakan nostamisen yhteydessä avausraja on täytettävä tavalliseen tapaan ilman canastabonusta." (002)
    """
    rules = resolve(preset)
    cards = PILE_CONCEALED[preset]
    state = start(preset, hands={0: cards}, upcards=["5C"], totals=[1500] * rules.teams)
    assert state.minimums[0] == 90
    take_fives = take("5H", "5S", "5D")  # 20 points
    if rules.going_out.concealed_minimum != "waived":
        illegal(state, 0, take_fives, "opening_minimum_not_met")
        return
    taken = play(state, (0, take_fives))
    assert taken.minimum_waived and legal_summary(taken, 0)["must_go_out"]
    illegal(taken, 0, discard("9H"), "must_go_out")
    illegal(taken, 0, add("5", "2C"), "must_go_out")  # the fours would lack their seventh card
    plan = legal_summary(taken, 0)["go_out"]
    assert plan and legal_actions(taken, 0) == plan[:1]
    out = play(taken, *[(0, m) for m in plan])
    assert out.hand_result["reason"] == "went_out" and row(out, 0)["going_out"] == 200
    # a take below the minimum after which going out is impossible stays refused
    blocked = start(preset, hands={0: [c if c != "2C" else "7D" for c in cards]}, upcards=["5C"], totals=[1500] * rules.teams)
    illegal(blocked, 0, take_fives, "opening_minimum_not_met")


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


def _queens_in_the_pile(preset: str, taker_queens: list[str]):
    """Seat 0 opens; the pile is QH (the upcard), QD (seat 0's discard) and KC; seat 2 takes it
    with KD KH, so QH and QD come to its hand with the pile."""
    state, taker = after_opening(
        preset, upcards=["QH"], opener_discard="QD", taker_cards=["KD", "KH", *taker_queens]
    )
    assert [code(k) for k in state.pile] == ["QH", "QD", "KC"]
    return play(state, (taker, take("KD", "KH"))), taker


@pytest.mark.parametrize("preset", ["wiki", "classic"])
def test_r18_no_hidden_canasta_from_pile_cards(preset):
    """R18 (wiki). A canasta that needs cards taken with the pile (other than the top card
    melded in the take) is not hidden. What the table knows came with the pile is public
    knowledge: a player holding more copies of a kind than came with the pile may have used
    its own, so laying one copy of it whole still makes a hidden canasta.

    "kanasta on kantelija, joka on koottu pelaajan käsiin ja pelataan kokonaan pöydälle tai joka vaatii vain yläkortin hylkäyspaalusta (hylkäyspaalu poimitaan tavalliseen tapaan)." (003)
    """
    extra = 100 if preset == "wiki" else 0
    # five queens of its own and the two from the pile: the canasta needs a pile card
    state, taker = _queens_in_the_pile(preset, ["QS", "QS", "QC", "QC", "QH"])
    assert sorted(code(k) for k in state.known_from_pile[taker]) == ["QD", "QH"]
    queens = ["QS", "QS", "QC", "QC", "QH", "QH", "QD"]
    laid = play(state, (taker, meld(queens)))
    team = state.rules.team_of(taker)
    assert row_now(laid, team)["canasta_bonus"] == 500
    # six of its own and a joker; it holds two QH and two QD, one of each from the pile
    state, taker = _queens_in_the_pile(preset, ["QS", "QS", "QC", "QC", "QH", "QD", "JK"])
    laid = play(state, (taker, meld(["QS", "QS", "QC", "QC", "QH", "QD", "JK"])))
    assert row_now(laid, team)["canasta_bonus"] == 300 + extra
    # showing one QH and one QD leaves nothing the table knows: it cannot tell which copy went
    assert laid.known_from_pile[taker] == ()


def test_r18_what_the_table_knows_came_with_the_pile():
    """R18. The cards known to be in a hand because they came with the pile: added by a take,
    lowered (never below zero) when the player melds, adds or discards copies, cleared by the
    next deal; a norwegian red three that goes to the hand counts too.

    "Når man tar inn sakehaugen skal man ta de kortene som ikke benyttes til å bygge kombinasjoner på hånden." (004)
    """
    state = start("norwegian", hands={0: ["KH", "KS", "KD", "JK", "9H", "8S"]}, upcards=["3D", "KC"], stock=["7C"])
    taken = play(state, (0, take("KH", "KS", "KD", "JK")))
    assert [code(k) for k in taken.known_from_pile[0]] == ["3D"]
    laid = play(taken, (0, meld(["3D"])))  # laid with a replacement draw: it is no longer held
    assert laid.known_from_pile[0] == ()
    thrown = play(taken, (0, discard("9H")))
    assert thrown.known_from_pile[0] == taken.known_from_pile[0]


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
