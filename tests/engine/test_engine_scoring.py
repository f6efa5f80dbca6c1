"""Red-three scores, the end of the stock, penalties and the seeds' worked examples: R20-R22."""

from __future__ import annotations

import pytest

from engine import code, legal_actions, legal_summary, parse_card, resolve
from engine.scoring import score_hand
from tests.engine.helpers import (
    PRESET_NAMES,
    after_opening,
    discard,
    draw,
    hand,
    illegal,
    meld,
    onto,
    pass_,
    play,
    row,
    set_table,
    skip_stock,
    start,
    take,
)

PARTS = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand")


def _adds_up(r: dict) -> None:
    assert r["hand_total"] == sum(r[k] for k in PARTS)


# -- R20: red-three bonus -------------------------------------------------------------------------

# preset: (one red three opened, unopened, all four opened, all four unopened)
RED_THREES = {
    "classic": (100, -100, 800, -800),
    "bicycle": (100, -100, 800, -800),
    "wiki": (100, -100, 800, -800),
    "finnish": (100, -100, 400, -400),
    "finnish-2p": (100, -100, 400, -400),
    "finnish-3p": (100, -100, 400, -400),
    "norwegian": (100, -200, 400, -800),
}


def _red_three_hand(preset: str, reds: list[str], opened: bool, overrides=None):
    state = start(preset, overrides=overrides, hands={0: reds + ["AH", "AS", "AD"]}, stock=["9C", "8C", "7C", "6C", "5C"])
    state = play(state, (0, draw()))
    if state.rules.melding.red_threes_optional:
        state = play(state, (0, meld(*[[c] for c in reds])))
    if opened:
        state = play(state, (0, meld(["AH", "AS", "AD"])))
    assert sorted(code(k) for k in state.red_threes[0]) == sorted(reds)
    # end the hand on an empty stock: nobody goes out
    state = skip_stock(state, 0)
    state = play(state, (0, discard("9C")))
    if state.hand_result is None:
        state = play(state, (state.to_act, pass_()))
    assert state.hand_result["reason"] == "stock_exhausted"
    return state


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize(
    "reds,opened,column",
    [(["3H"], True, 0), (["3H"], False, 1), (["3H", "3D", "3H", "3D"], True, 2), (["3H", "3D", "3H", "3D"], False, 3)],
    ids=["one-opened", "one-unopened", "four-opened", "four-unopened"],
)
def test_r20_red_three_bonus(preset, reds, opened, column):
    """R20. 100 each; all four 800 (classic, bicycle, wiki); a side without a meld scores them
    negative: the same amounts (classic, bicycle, wiki), -100 each (finnish), -200 each
    (norwegian).

    "Punaiset kolmoset antavat 100 pistettä kappaleelta, ja neljä punaista kolmosta antaa 800 pistettä. Jos puolellasi ei ole omaa ilmoitusta, punaiset kolmoset lasketaan miinuspisteiksi." (001)
    "Jos joukkueella ei ole erän lopussa yhtään pöytäystä, se saa punaisista kolmosistaan 100 miinuspistettä." (000)
    "Punaisten kolmosten bonus on plussaa vain, jos pari on pelannut vähintään yhden yhdistelmän. Ilman yhtäkään pöytäyhdistelmää sama määrä vähennetään pisteistä." (002)
    "*Husk at om du har lagt en rød treer på bordet, og noen går ut uten at du har åpnet, gir dine røde treere minus 200 poeng." (004)
    """
    state = _red_three_hand(preset, reds, opened)
    r = row(state, 0)
    assert r["red_threes"] == RED_THREES[preset][column]
    assert r["going_out"] == 0
    _adds_up(r)


@pytest.mark.parametrize("opened,want", [(True, 800), (False, -400)])
def test_r20_finnish_traditional_all_four(opened, want):
    """R20 (finnish house rule "traditional"): all four red threes 800.

    "Kaikki punaiset kolmoset. Perinteisissä säännöissä kaikkien punaisten kolmosten keräämisestä saa 400 pisteen bonuksen." (000)
    """
    state = _red_three_hand("finnish", ["3H", "3D", "3H", "3D"], opened, overrides={"red_three_all_bonus": 800})
    assert row(state, 0)["red_threes"] == want


# -- R21: the stock runs out ----------------------------------------------------------------------


def _stock_out(preset, last_discard="KC", opener_discard="5C"):
    return after_opening(
        preset,
        taker_cards=["QH", "QS", "KH", "KS"],
        opener_melds=(("AH", "AS", "AD"), ("KH", "KS", "KD")),
        opener_discard=opener_discard,
        last_discard=last_discard,
        stock_left=0,
    )


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r21_top_card_fits_a_meld(preset):
    """R21. Stock empty, top card fits the side's meld, pile unfrozen: taking is compulsory in
    classic, bicycle and wiki, optional in finnish; norwegian ends the hand at once.

    "Sinun on otettava jäädyttämätön poistopino, jos päällimmäinen kortti sopii parisi olemassa olevaan ilmoitukseen." (001)
    "Nosto on pakollinen, kun pakka ei ole lukittu ja päällimmäinen kortti sopii parin pöytäyhdistelmään." (002)
    "Jos umpipakka loppuu, peliä jatketaan ilman sitä, kunnes joku pelaajista lopettaa pelin tai ei vuorollaan nosta avopakkaa." (000)
    "Ellers så er spillet ferdig når bunken er tom." (004)
    """
    state, taker = _stock_out(preset)
    mode = state.rules.dealing.stock_out
    if mode == "end":
        assert state.hand_result["reason"] == "stock_exhausted" and state.hand_result["by"] == taker
        assert all(r["going_out"] == 0 for r in state.hand_result["scores"])
        return
    assert state.stock_size == 0 and state.to_act == taker and state.phase == "draw"
    illegal(state, taker, draw(), "stock_empty")
    types = {a["type"] for a in legal_actions(state, taker)}
    if mode == "play_on_forced":
        illegal(state, taker, pass_(), "must_take_pile")
        assert "pass" not in types and {"type": "take_pile", "onto": "K"} in legal_actions(state, taker)
    else:
        ended = play(state, (taker, pass_()))
        assert ended.hand_result["reason"] == "stock_exhausted" and ended.hand_result["by"] == taker
        assert all(r["going_out"] == 0 for r in ended.hand_result["scores"])
        assert "pass" in types
    after = play(state, (taker, onto("K")))
    assert after.phase == "play"


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("case", ["new-meld-only", "frozen"])
def test_r21_taking_is_optional(preset, case):
    """R21. When only a new meld would use the top card, or the pile is frozen, the player may
    decline with pass, which ends the hand.

    "Saat jättää pinon ottamatta, jos päällimmäisellä kortilla voi muodostaa vain uuden ilmoituksen. Jako päättyy, kun pelaaja ei voi ottaa pinoa tai päättää jättää sen ottamatta." (001)
    "Uuden yhdistelmän muodostamiseksi pakkaa ei ole pakko ottaa." (002)
    """
    if case == "new-meld-only":
        state, taker = _stock_out(preset, last_discard="QC")
        taking = take("QH", "QS")
    else:
        state, taker = _stock_out(preset, opener_discard="2C")
        taking = take("KH", "KS")
    if state.rules.dealing.stock_out == "end":
        assert state.hand_result["reason"] == "stock_exhausted"
        return
    play(state, (taker, taking))
    ended = play(state, (taker, pass_()))
    assert ended.hand_result["reason"] == "stock_exhausted"


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("last", ["3S", "JK", "9C"])
def test_r21_cannot_take_the_hand_ends_by_itself(preset, last):
    """R21. Stock empty, and the next player cannot take the pile (a black three or a wild on
    top, or a frozen pile without a natural pair): the hand ends at the discard, with no move
    of that player, who is named as ending it. No going-out bonus.

    "Jako päättyy, kun pelaaja ei voi ottaa pinoa tai päättää jättää sen ottamatta." (001)
    "Jako päättyy, kun vuorossa oleva pelaaja ei voi nostaa poistopakkaa tai kieltäytyy nostosta tilanteessa, jossa se on vapaaehtoinen." (002)
    "Jos umpipakka loppuu, peliä jatketaan ilman sitä, kunnes joku pelaajista lopettaa pelin tai ei vuorollaan nosta avopakkaa." (000)
    """
    # the opener's partner holds no nine: a 9C on top is frozen (by the 2C) for it without a pair
    state, taker = _stock_out(preset, last_discard=last, opener_discard="2C")
    assert state.hand_result is not None, "the hand goes on although nobody can take the pile"
    assert state.hand_result["reason"] == "stock_exhausted" and state.hand_result["by"] == taker
    assert all(r["going_out"] == 0 for r in state.hand_result["scores"])
    assert state.phase in ("deal", "over") and legal_actions(state, taker) == []  # nothing to pass


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r21_can_take_is_exact(preset):
    """R21. Whether a player can take the pile is the judgement of the take itself: an unopened
    side whose only take melds a joker with the pair (80 points) still plays on, while a side
    one card short of any take does not.

    "Jako päättyy, kun pelaaja ei voi ottaa pinoa tai päättää jättää sen ottamatta." (001)
    """
    hands = {1: ["KH", "KS", "JK", "9D"]}
    state = start(preset, hands=hands, stock_bottom=["KC"])
    state = skip_stock(state, 1)
    state = play(state, (0, draw()), (0, discard("KC")))  # seat 1 (not opened): KH KS JK
    if state.rules.dealing.stock_out == "end":
        assert state.hand_result["reason"] == "stock_exhausted"
        return
    assert state.hand_result is None and state.to_act == 1
    actions = legal_actions(state, 1)
    assert pass_() in actions and any(a["type"] == "take_pile" for a in actions)
    assert legal_summary(state, 1)["may_take_pile"]
    play(state, (1, take("KH", "KS", "JK")))
    ended = play(state, (1, pass_()))
    assert ended.hand_result["reason"] == "stock_exhausted" and ended.hand_result["by"] == 1
    # without the joker the kings count 30: no take, and the hand ends at seat 0's discard
    state = start(preset, hands={1: ["KH", "KS", "QC", "9D"]}, stock_bottom=["KC"])
    state = play(skip_stock(state, 1), (0, draw()), (0, discard("KC")))
    assert state.hand_result["reason"] == "stock_exhausted" and state.hand_result["by"] == 1


def test_r21_a_no_that_leaves_nothing_to_take_ends_the_hand():
    """R21/R17 (bicycle asks before the draw). On an empty stock the player's one take goes
    out; the partner answers "no": the pile cannot be taken any more, and the hand ends.

    "Jako päättyy, kun vuorossa oleva pelaaja ei voi nostaa poistopakkaa tai kieltäytyy nostosta tilanteessa, jossa se on vapaaehtoinen." (002)
    """
    kings = ["KH", "KS", "KD", "KC", "KH", "KS", "KD"]
    state = set_table(start("bicycle"), melds={0: [kings]}, hands={0: ["QH", "QS"]})
    # a made-up position: seat 0 holds QH QS, the pile is QC alone, the stock is gone
    state = skip_stock(state, 0)._replace(pile=(parse_card("QC"),), pile_frozen_by=-1)
    assert legal_actions(state, 0) == [take("QS", "QH"), pass_(), {"type": "ask_go_out"}]
    asked = play(state, (0, {"type": "ask_go_out"}))
    yes = play(asked, (2, {"type": "answer_go_out", "yes": True}))
    assert yes.hand_result is None and play(yes, (0, take("QH", "QS"))).hand_result["reason"] == "went_out"
    no = play(asked, (2, {"type": "answer_go_out", "yes": False}))
    assert no.hand_result["reason"] == "stock_exhausted" and no.hand_result["by"] == 0


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r21_pass_only_on_an_empty_stock(preset):
    """R21. pass exists only once the stock is empty.

    "Jos viimeinen kortti on muu kuin punainen kolmonen, sen nostanut pelaaja saa pelata vuoronsa." (002)
    """
    state = start(preset)
    illegal(state, 0, pass_(), "stock_not_empty")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_r21_last_card_red_three(preset):
    """R21. The last stock card a red three: it is laid and the hand ends at once, without a
    meld or a discard (not in norwegian, where the player keeps it and plays on).

    "Jos umpipakan viimeinen kortti on punainen kolmonen, sen nostanut pelaaja saa pöydätä sen, mutta ei saa pöydätä muita kortteja tai heittää korttia avopakkaan. Erä päättyy heti." (000)
    "Jos nostopakan viimeinen kortti on punainen kolmonen, näytä kortti ja jako päättyy heti ilman ilmoittamista tai kortin poisheittämistä." (001)
    """
    state = skip_stock(start(preset, stock_bottom=["3H"]), 1)
    after = play(state, (0, draw()))
    if state.rules.melding.red_threes_optional:
        assert after.phase == "play" and hand(after, 0)["3H"] == 1
        return
    assert after.hand_result["reason"] == "red_three_last" and after.hand_result["by"] == 0
    assert [code(k) for k in after.red_threes[0]] == ["3H"]
    assert all(r["going_out"] == 0 for r in after.hand_result["scores"])
    assert after.phase in ("deal", "over")
    illegal(after, 0, discard("9C"), "hand_not_started")


@pytest.mark.parametrize("preset,players", [("finnish-2p", 2), ("finnish-3p", 3), ("wiki", 2), ("wiki", 3), ("classic", 4)])
def test_r21_r23_red_three_in_the_last_two_cards(preset, players):
    """R21/R23. A red three among the last two cards: drawn second (it is the last card) the
    hand ends; drawn first, its replacement is the lone last card and play goes on.

    "Jos nostopakan viimeinen kortti on punainen kolmonen, näytä se ja lopeta jako heti. Et saa enää pelata yhdistelmiä tai poistaa korttia." (002)
    """
    state = skip_stock(start(preset, players, stock_bottom=["9C", "3H"]), 2)
    after = play(state, (0, draw()))
    if state.rules.dealing.draw_count == 2:
        assert after.hand_result["reason"] == "red_three_last"
        assert hand(after, 0)["9C"] >= 1
    else:
        assert after.phase == "play" and after.stock_size == 1
    state = skip_stock(start(preset, players, stock_bottom=["3H", "9C"]), 2)
    after = play(state, (0, draw()))
    assert after.phase == "play" and after.stock_size == 0
    assert [code(k) for k in after.red_threes[0]] == ["3H"] and hand(after, 0)["9C"] >= 1
    state = skip_stock(start(preset, players, stock_bottom=["3D", "3H"]), 2)
    after = play(state, (0, draw()))
    assert after.hand_result["reason"] == "red_three_last"
    assert sorted(code(k) for k in after.red_threes[0]) == ["3D", "3H"]


# -- R22: penalties -----------------------------------------------------------------------------------


def test_r22_no_red_three_penalty_before_a_first_turn():
    """R22 (finnish). Red threes are laid at each player's first turn, so nobody keeps one in
    hand by mistake; a player whose first turn never came (seat 0 went out concealed at once)
    pays no 500 penalty.

    "Virheistä saa sakkopisteitä. Tavallisimpia virheitä ovat punaisten kolmosten jättäminen käteen (500 sakkopistettä) ja lopetusluvan kysyminen ilman, että pystyy lopettamaan (100 sakkopistettä)." (000)
    "Ensimmäisellä vuorollaan pelaajat pelaavat käsistään kaikki punaiset kolmoset pöydälle kuvapuoli ylöspäin ja nostavat umpipakasta yhtä monta korttia tilalle." (000)
    """
    kings = ["KH", "KS", "KD", "KC", "KH", "KS", "KD"]
    state = start("finnish", hands={0: kings + ["QH", "QS", "QD", "9H"], 1: ["3H"]}, stock=["QC"])
    assert hand(state, 1)["3H"] == 1
    state = play(state, (0, draw()), (0, meld(kings, ["QH", "QS", "QD", "QC"])), (0, discard("9H")))
    assert state.hand_result["reason"] == "went_out"
    assert row(state, 0)["going_out"] == 200
    assert row(state, 1)["penalties"] == 0
    _adds_up(row(state, 1))


@pytest.mark.parametrize("preset,penalty", [("finnish", 500), ("finnish-2p", 500), ("classic", 0), ("bicycle", 0), ("wiki", 0)])
def test_r22_red_three_kept_after_the_first_turn(preset, penalty):
    """R22. What the option charges if a red three were still in a hand after its player's
    first turn (the engine lays them itself, so a game never gets there): 500 in finnish,
    nothing elsewhere; the card's 100 counts in hand like any card.

    "Tavallisimpia virheitä ovat punaisten kolmosten jättäminen käteen (500 sakkopistettä) ja lopetusluvan kysyminen ilman, että pystyy lopettamaan (100 sakkopistettä)." (000)
    """
    state = set_table(start(preset), hands={0: ["3H", "9C"]})
    assert state.first_turn_done[0]
    r = score_hand(state, "stock_exhausted", 1, False)[0]
    assert r["penalties"] == -penalty
    assert r["in_hand"] <= -110
    _adds_up(r)


# -- the seeds' worked examples -------------------------------------------------------------------------


def _scored(preset, melds, hands, red_threes=None, reason="went_out", by=0, concealed=False):
    state = start(preset)
    state = set_table(state, melds=melds, hands=hands, red_threes=red_threes or {})
    return score_hand(state, reason, by, concealed)


def test_seed_002_seven_aces_640():
    """Seed 002: a natural canasta of seven aces is 7 x 20 + 500 = 640.

    "Seitsemän ässän puhtaasta canastasta tulee siten 7 × 20 + 500 eli 640 pistettä." (002)
    """
    aces = ["AH", "AS", "AD", "AC", "AH", "AS", "AD"]
    r = _scored("bicycle", {0: [aces]}, {0: [], 2: []}, reason="stock_exhausted")[0]
    assert r["melds"] + r["canasta_bonus"] == 640


def test_seed_002_four_nines_three_twos_400():
    """Seed 002: four nines and three twos are a mixed canasta: 40 + 60 + 300 = 400.

    "Neljä yhdeksikköä ja kolme kakkosta muodostavat sekacanastan: kortit ovat yhteensä 40 + 60 eli 100 pistettä, ja bonus nostaa arvon 400 pisteeseen." (002)
    """
    nines = ["9H", "9S", "9D", "9C", "2C", "2D", "2H"]
    r = _scored("bicycle", {0: [nines]}, {0: [], 2: []}, reason="stock_exhausted")[0]
    assert (r["melds"], r["canasta_bonus"]) == (100, 300)


@pytest.mark.parametrize("preset", ["bicycle", "classic"])
def test_seed_002_hand_of_1205(preset):
    """Seed 002: 640 + 400 + 100 (a red three) + 100 (going out) - 35 (K, A and 4 left in the
    partner's hand) = 1 205.

    "Oletetaan, että parillanne on seitsemän ässän puhdas canasta sekä neljän yhdeksikön ja kolmen kakkosen sekacanasta. Niiden arvot bonuksineen ovat 640 ja 400 pistettä. Yksi punainen kolmonen tuo 100 pistettä ja tavallinen lopetus toiset 100. Lopettaneen pelaajan käsi on tyhjä, mutta hänen peliparilleen jää käteen kuningas, ässä ja nelonen, yhteensä 35 pistettä." (002)
    "Jaon tulos on 640 + 400 + 100 + 100 − 35 eli 1 205 pistettä." (002)
    """
    aces = ["AH", "AS", "AD", "AC", "AH", "AS", "AD"]
    nines = ["9H", "9S", "9D", "9C", "2C", "2D", "2H"]
    rows = _scored(preset, {0: [aces, nines]}, {0: [], 2: ["KH", "AC", "4S"]}, red_threes={0: ["3H"]})
    r = rows[0]
    assert r["melds"] + r["canasta_bonus"] == 640 + 400
    assert (r["red_threes"], r["going_out"], r["in_hand"], r["penalties"]) == (100, 100, -35, 0)
    assert r["hand_total"] == 1205 and r["total"] == 1205
    _adds_up(r)


def test_seed_002_opening_at_1500():
    """Seed 002: at 1 500 points the opening needs 90: three kings (30) and two eights with a
    joker (70) make 100; three kings alone would not reach even 50.

    "Jos parillanne on 1 500 pistettä, avaukseen tarvitaan vähintään 90. Kolme kuningasta antaa 30 pistettä. Kaksi kasia ja jokeri antavat 10 + 10 + 50 eli 70 pistettä. Näiden kahden kelvollisen yhdistelmän yhteisarvo on 100, joten ne riittävät avaukseen. Kolme kuningasta ei yksin riittäisi edes 50 pisteen rajaan." (002)
    """
    cards = ["KH", "KS", "KD", "8H", "8S", "JK"]
    state = play(start("bicycle", hands={0: cards}, totals=[1500, 0], stock=["9C"]), (0, draw()))
    assert state.minimums == (90, 50)
    illegal(state, 0, meld(["KH", "KS", "KD"]), "opening_minimum_not_met")
    illegal(state, 0, meld(["8H", "8S", "JK"]), "opening_minimum_not_met")  # 70 < 90
    after = play(state, (0, meld(["KH", "KS", "KD"], ["8H", "8S", "JK"])))
    assert after.opened(0)
    state = play(start("bicycle", hands={0: cards}, stock=["9C"]), (0, draw()))
    assert state.minimums == (50, 50)
    illegal(state, 0, meld(["KH", "KS", "KD"]), "opening_minimum_not_met")


def test_seed_001_hand_of_580():
    """Seed 001: melds worth 180 card points, among them a mixed canasta (300), and going out
    (100): 580 before the cards left in hand.

    "Pieni esimerkki. Puolellasi on ilmoituksia, joiden arvo on 180 korttipistettä, sekä sekoitettu canasta, jonka arvo on 300 pistettä, sekä 100 pistettä lopetuksesta. Yhteensä tämä tekee 580 pistettä jaosta ennen kuin vähennät puolesi käteen jääneet kortit." (001)
    """
    mixed = ["KH", "KS", "KD", "KC", "KH", "JK", "2C"]  # 50 + 70 = 120
    aces = ["AH", "AS", "AD"]  # 60
    r = _scored("classic", {0: [mixed, aces]}, {0: [], 2: []})[0]
    assert (r["melds"], r["canasta_bonus"], r["going_out"]) == (180, 300, 100)
    assert r["hand_total"] == 580
    r = _scored("classic", {0: [mixed, aces]}, {0: [], 2: ["4H", "QS"]})[0]
    assert r["hand_total"] == 580 - 15


def test_seed_001_hand_of_580_played():
    """Seed 001's example, played: seat 0 opens with four aces (80), then lays a mixed canasta
    of four kings and three 2s (100) and goes out with a discard: 180 + 300 + 100.

    "Yhteensä tämä tekee 580 pistettä jaosta ennen kuin vähennät puolesi käteen jääneet kortit." (001)
    """
    mixed = ["KH", "KS", "KD", "KC", "2C", "2D", "2H"]
    state = start("classic", hands={0: ["AH", "AS", "AD", "AC"] + mixed}, stock=["5D", "6D", "7D", "8D", "9C"])
    state = play(
        state,
        (0, draw()), (0, meld(["AH", "AS", "AD", "AC"])), (0, discard("5D")),
        (1, draw()), (1, discard("6D")),
        (2, draw()), (2, discard("7D")),
        (3, draw()), (3, discard("8D")),
        (0, draw()), (0, meld(mixed)), (0, discard("9C")),
    )
    assert state.hand_result["reason"] == "went_out"
    r = row(state, 0)
    assert (r["melds"], r["canasta_bonus"], r["going_out"]) == (180, 300, 100)
    assert r["hand_total"] == 580 + r["in_hand"]
    assert r["in_hand"] == -sum(_value(c) for c in hand(state, 2).elements())
    _adds_up(r)


def _value(c: str) -> int:
    from engine.cards import VALUE, parse_card

    return VALUE[parse_card(c)]


def test_scores_add_up_and_totals_carry():
    """Every row: hand_total is the sum of its parts, and total adds it to the side's total.

    "Merkitse jaon tulos paperille ja lisää se parin aikaisempaan yhteistulokseen ennen seuraavan avausrajan katsomista." (002)
    """
    state = start("classic", totals=[1200, 3100], hands={0: ["AH", "AS", "AD"]}, stock=["9C"])
    assert state.minimums == (50, 120)
    state = play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])))
    state = skip_stock(state, 0)
    state = play(state, (0, discard("9C")))  # seat 1 cannot take the pile: the hand ends (R21)
    assert state.hand_result["reason"] == "stock_exhausted"
    for team, before in enumerate((1200, 3100)):
        r = row(state, team)
        _adds_up(r)
        assert r["total"] == before + r["hand_total"]
    assert list(state.totals) == [row(state, 0)["total"], row(state, 1)["total"]]
    assert resolve("classic").melding.opening_minimum(state.totals[0]) in (15, 50, 90, 120)
