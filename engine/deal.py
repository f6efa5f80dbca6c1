"""Starting a game and dealing a hand from a given deck order (docs/gamelog.md, "Deal")."""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Sequence

from engine.cards import (
    CARDS_PER_DECK,
    CODES,
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    KINDS,
    RANK_OF,
    THREE,
    pack,
    parse_card,
)
from engine.errors import IllegalMove
from engine.rules import RuleOptions
from engine.state import NO_MELDS, NO_SEAT, NOT_FROZEN, State
from engine.turns import begin_turn, lay_red_threes


def new_game(rules: RuleOptions, first_dealer: int | None = None) -> State:
    """A game waiting for its first deck. The last seat deals first, so seat 0 plays first."""
    dealer = rules.players - 1 if first_dealer is None else first_dealer
    if not 0 <= dealer < rules.players:
        raise IllegalMove("invalid_dealer", f"the dealer must be a seat from 0 to {rules.players - 1}")
    teams = rules.teams
    # `dealer` holds the previous hand's dealer until the deal rotates it.
    return State(rules=rules, phase="deal", dealer=(dealer - 1) % rules.players, totals=(0,) * teams)


def commitment(salt: str, deck: Sequence[str]) -> str:
    """SHA-256 of ``salt + ":" + ",".join(deck)``, lowercase hex (docs/gamelog.md)."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode()).hexdigest()


def shuffle(rules: RuleOptions, rng: random.Random | None = None) -> tuple[list[str], str, str]:
    """A shuffled pack with its salt and commitment.

    Without ``rng`` the order and the salt come from :mod:`secrets`. A seeded ``rng`` is for
    tests and simulations only: a known seed lets anyone predict the deck.
    """
    cards = pack(rules.dealing.decks)
    if rng is None:
        sysrand = secrets.SystemRandom()
        sysrand.shuffle(cards)
        salt = secrets.token_hex(16)
    else:
        rng.shuffle(cards)
        salt = f"{rng.getrandbits(128):032x}"
    deck = [CODES[k] for k in cards]
    return deck, salt, commitment(salt, deck)


def parse_deck(rules: RuleOptions, deck: Sequence[str]) -> tuple[int, ...]:
    """Card codes -> kinds, checking that they are exactly the preset's pack."""
    try:
        kinds = tuple(parse_card(c) for c in deck)
    except ValueError as e:
        raise IllegalMove("invalid_deck", f"the deck holds something that is not a card: {e}") from None
    expected = [0] * KINDS
    for k in pack(rules.dealing.decks):
        expected[k] += 1
    got = [0] * KINDS
    for k in kinds:
        got[k] += 1
    if got != expected:
        missing = [CODES[k] for k in range(KINDS) if got[k] < expected[k]]
        extra = [CODES[k] for k in range(KINDS) if got[k] > expected[k]]
        detail = []
        if missing:
            detail.append("missing " + " ".join(missing[:6]))
        if extra:
            detail.append("extra " + " ".join(extra[:6]))
        raise IllegalMove(
            "invalid_deck", f"the deck is not the {CARDS_PER_DECK * rules.dealing.decks}-card pack ({'; '.join(detail)})"
        )
    return kinds


def deal(state: State, deck: Sequence[str], salt: str | None = None, commitment_hex: str | None = None) -> State:
    """Deal the next hand from ``deck`` (top card first) and start its first turn.

    Cards go one at a time clockwise from the dealer's left; then the upcard sequence (R1);
    the rest is the stock. Red threes are then laid as R2 says.
    """
    if state.phase != "deal":
        raise IllegalMove("not_dealing", "a hand is being played; the next deal comes when it ends")
    rules = state.rules
    kinds = parse_deck(rules, deck)
    if salt is not None:
        digest = commitment(salt, deck)
        if commitment_hex is not None and digest != commitment_hex:
            raise IllegalMove("commitment_mismatch", "the deck and salt do not match the commitment")
        commitment_hex = digest
    elif commitment_hex is not None:
        raise IllegalMove("commitment_mismatch", "a commitment was given without its salt")

    n = rules.players
    dealer = (state.dealer + 1) % n
    hands = [[0] * KINDS for _ in range(n)]
    pos = 0
    for i in range(n * rules.dealing.hand_size):
        hands[(dealer + 1 + i) % n][kinds[pos]] += 1
        pos += 1

    # R1: turn the upcard; jokers, 2s and 3s stay in the pile and another card is turned.
    pile: list[int] = []
    frozen_by = NOT_FROZEN
    while pos < len(kinds):
        card = kinds[pos]
        pos += 1
        pile.append(card)
        freezes = (
            (IS_WILD[card] and rules.dealing.upcard_wild_freezes)
            or (IS_RED_THREE[card] and rules.dealing.upcard_red_three_freezes)
            or (IS_BLACK_THREE[card] and rules.dealing.upcard_black_three_freezes)
        )
        if freezes and frozen_by == NOT_FROZEN:
            frozen_by = card
        if not (IS_WILD[card] or RANK_OF[card] == THREE):
            break

    teams = rules.teams
    s = State(
        rules=rules,
        phase="draw",
        hand_no=state.hand_no + 1,
        dealer=dealer,
        totals=state.totals,
        moves=state.moves,
        deck=kinds,
        salt=salt,
        commitment=commitment_hex,
        stock_pos=pos,
        hands=tuple(tuple(h) for h in hands),
        pile=tuple(pile),
        pile_frozen_by=frozen_by,
        pile_lock=NO_SEAT,
        melds=(NO_MELDS,) * teams,
        red_threes=((),) * teams,
        minimums=tuple(rules.melding.opening_minimum(t) for t in state.totals),
        melded=(False,) * n,
        known_from_pile=((),) * n,
        first_turn_done=(False,) * n,
        penalties=(0,) * teams,
        hand_result=state.hand_result,
    )
    if rules.dealing.dealt_red_threes == "at_once" and not rules.melding.red_threes_optional:
        for k in range(n):
            s = lay_red_threes(s, (dealer + 1 + k) % n)
        s = s._replace(first_turn_done=(True,) * n)
    return begin_turn(s, (dealer + 1) % n)

