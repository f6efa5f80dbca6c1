"""What each seat, and a spectator, may see: plain JSON-ready data.

A seat sees its own hand; everybody sees the melds, red threes, the pile (every card in it,
bottom first: each was laid face up, as an upcard or a discard; the card that froze it, and
the wilds laid beside it), the cards each seat is known to hold because it took them with the
pile (``known_from_pile``), the stock's size and every hand's size. A player with a perfect
memory knows all of that from the table; the view says it so that every seat, person or bot,
plays on the same footing. Nobody sees another hand's other cards or the stock. The deck is
revealed only by the game log.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engine.cards import CODES, IS_RED_THREE, RANKS, hand_codes, hand_value
from engine.scoring import running_points
from engine.state import GRANTED, NO_SEAT, NOT_ASKED, NOT_FROZEN, REFUSED, Meld, State, result_copy

# A meld's public face: rank code, card codes, naturals, wilds, canasta kind (or None).
MeldFace = tuple[str, tuple[str, ...], int, int, str | None]


@lru_cache(maxsize=1024)
def _side_faces(side: tuple[Meld | None, ...], canasta_size: int, min_naturals: int) -> tuple[MeldFace, ...]:
    """The faces of one side's melds. A side's melds change only when it melds, so most
    views of a game find them here."""
    faces = []
    for m in side:
        if m is None:
            continue
        kind = ("mixed" if m.wilds else "natural") if m.reaches(canasta_size, min_naturals) else None
        faces.append((RANKS[m.rank], tuple(CODES[k] for k in m.cards), m.naturals, m.wilds, kind))
    return tuple(faces)


def _melds(s: State, team: int) -> list[dict[str, Any]]:
    """Fresh dicts each time (callers may change what they get), built from cached faces."""
    rules = s.rules
    return [
        {"rank": rank, "cards": list(cards), "naturals": naturals, "wilds": wilds, "canasta": canasta}
        for rank, cards, naturals, wilds, canasta in _side_faces(
            s.melds[team], rules.melding.canasta_size, rules.melding.canasta_min_naturals
        )
    ]


def _team_seats(s: State) -> list[list[int]]:
    """The seats of each team, in seat order (one pass over the seats)."""
    rules = s.rules
    teams: list[list[int]] = [[] for _ in range(rules.teams)]
    for seat in range(rules.players):
        teams[rules.team_of(seat)].append(seat)
    return teams


def pile_view(s: State) -> dict[str, Any]:
    """The pile as the table sees it. A wild laid beside the pile (R13 "beside_pile") freezes it
    without covering the top card: ``frozen_by`` names it and ``beside`` lists every such wild,
    all of which go with the pile to whoever takes it."""
    reasons: list[dict[str, Any]] = []
    if s.pile_frozen_by != NOT_FROZEN:
        where = "wild_beside_pile" if s.pile_frozen_by in s.pile_beside else "frozen_by_card"
        reasons.append({"reason": where, "card": CODES[s.pile_frozen_by]})
    if s.pile_lock != NO_SEAT:
        reasons.append({"reason": "locked_by_red_three", "until_seat": s.pile_lock})
    return {
        "top": CODES[s.pile[-1]] if s.pile else None,
        "size": len(s.pile),
        "cards": [CODES[k] for k in s.pile],  # bottom first: all were laid face up
        "beside": [CODES[k] for k in s.pile_beside],
        "frozen_by": CODES[s.pile_frozen_by] if s.pile_frozen_by != NOT_FROZEN else None,
        "locked_until_seat": s.pile_lock if s.pile_lock != NO_SEAT else None,
        "frozen_for_teams": [
            t for t in range(s.rules.teams) if s.pile_frozen_by != NOT_FROZEN or (s.melds and not s.opened(t))
        ],
        "reasons": reasons,
    }


_PERMISSION = {NOT_ASKED: None, REFUSED: False, GRANTED: True}  # State.permission -> the view's answer


def public_view(s: State) -> dict[str, Any]:
    """Everything a spectator may see."""
    rules = s.rules
    in_hand = bool(s.hands) and s.phase in ("draw", "play", "answer")
    return {
        "phase": s.phase,
        "hand_no": s.hand_no,
        "dealer": s.dealer if s.hand_no else None,
        "turn": s.turn if in_hand else None,
        "to_act": s.to_act if s.to_act >= 0 else None,
        "moves": s.moves,
        "players": rules.players,
        "teams": _team_seats(s),
        "totals": list(s.totals),
        "hand_sizes": [sum(h) for h in s.hands],
        # per seat: cards the table saw it take with the pile and not yet meld or discard (R18)
        "known_from_pile": [[CODES[k] for k in known] for known in s.known_from_pile],
        "stock_size": s.stock_size if s.hands else 0,
        "pile": pile_view(s),
        "melds": [_melds(s, t) for t in range(rules.teams)] if s.melds else [],
        "red_threes": [[CODES[k] for k in r] for r in s.red_threes],
        "opened": [s.opened(t) for t in range(rules.teams)] if s.melds else [],
        "opening_minimums": list(s.minimums),
        # per side, the points on the table this hand, its canastas and what it still needs
        "running": running_points(s) if s.melds else [],
        "penalties": list(s.penalties),
        "commitment": s.commitment,
        "asked_go_out": s.asked,
        "permission": _PERMISSION[s.permission],
        # copies: a view is the caller's to change, the state's results are shared by
        # every view and every cached copy of the state
        "last_hand": result_copy(s.hand_result),
        "result": result_copy(s.game_result),
    }


def spectator_view(s: State) -> dict[str, Any]:
    view = public_view(s)
    view["seat"] = None
    return view


def seat_view(s: State, seat: int) -> dict[str, Any]:
    from engine.legal import legal_summary

    view = public_view(s)
    view["seat"] = seat
    view["team"] = s.rules.team_of(seat)
    view["hand"] = hand_codes(s.hands[seat]) if s.hands else []
    # what the hand would cost the side if the hand ended now (R18): the seat's own cards only
    view["hand_points"] = hand_value(s.hands[seat]) if s.hands else 0
    view["legal"] = legal_summary(s, seat)
    return view


def describe_move(before: State, after: State, seat: int, action: dict[str, Any], viewer: int | None) -> dict[str, Any]:
    """An event that stands on its own, as ``viewer`` (a seat, or None for a spectator) may see it.

    Cards drawn from the stock are named only to the seat that drew them; red threes laid
    by the engine are public.
    """
    team = before.rules.team_of(seat)
    event: dict[str, Any] = {"seat": seat, "action": dict(action), "move": after.moves}
    laid = after.red_threes[team][len(before.red_threes[team]):] if after.hand_no == before.hand_no else ()
    if laid:
        event["red_threes_laid"] = [CODES[k] for k in laid]
    if action.get("type") == "draw" or (action.get("type") == "meld" and laid):
        drawn = _drawn(before, after)
        event["drew"] = len(drawn)
        if viewer == seat:
            event["cards"] = drawn
    if action.get("type") == "take_pile":
        event["pile_taken"] = len(before.pile) + len(before.pile_beside)
    if action.get("type") == "discard" and len(after.pile_beside) > len(before.pile_beside):
        event["beside_pile"] = True  # R13 "beside_pile": the wild lies beside the pile, not on it
    nxt = after.turn
    if (
        after.hand_no == before.hand_no
        and nxt != seat
        and nxt >= 0
        and not before.first_turn_done[nxt]
        and after.first_turn_done[nxt]
    ):
        # R2 "first_turn": the next seat's dealt red threes were laid as its turn began
        t = after.rules.team_of(nxt)
        new = after.red_threes[t][len(before.red_threes[t]):]
        if new:
            event["first_turn_red_threes"] = {"seat": nxt, "cards": [CODES[k] for k in new]}
    if after.hand_no != before.hand_no or after.phase in ("deal", "over"):
        event["hand_end"] = result_copy(after.hand_result)
    if after.phase == "over":
        event["game_end"] = result_copy(after.game_result)
    event["phase"] = after.phase
    event["turn"] = after.turn if after.phase in ("draw", "play", "answer") else None
    event["to_act"] = after.to_act if after.to_act >= 0 else None
    return event


def _drawn(before: State, after: State) -> list[str]:
    """The cards that came from the stock into the mover's hand, sorted: the stock cards the
    move took, but the red threes laid from them (R3; with optional red threes, R14, none is).

    Read from the stock, not from the change of the hand: a replacement that repeats a card
    the move laid or melded does not make the hand's count of it grow, and the count (told to
    every seat) would then have said which card the hidden replacement was."""
    keep_red = before.rules.melding.red_threes_optional
    taken = before.deck[before.stock_pos:after.stock_pos]
    return [CODES[k] for k in sorted(taken) if keep_red or not IS_RED_THREE[k]]
