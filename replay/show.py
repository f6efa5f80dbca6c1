"""`canasta replay show`: a position of a logged game as a plain text table.

Everything shown comes from the engine's views (``spectator_view`` / ``seat_view``) plus the
hands, so the table says what the service would have said at that move; nothing here
interprets rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import engine
from engine.cards import hand_codes


def render(state: engine.State, header: dict[str, Any], after_move: int, seat: int | None = None) -> str:
    """The position as text: all hands (a spectator with the log), or one seat's hand and view."""
    view = engine.seat_view(state, seat) if seat is not None else engine.spectator_view(state)
    rules = state.rules
    names = {s.get("seat"): s.get("name") for s in header.get("seats") or () if isinstance(s, dict)}
    out: list[str] = []
    title = f"game {header.get('game') or '(no id)'}: {rules.preset}, {rules.players} players"
    if rules.team_size > 1:
        title += f" in {rules.teams} teams"
    out.append(f"{title}; hand {view['hand_no']}, dealer seat {view['dealer']}; after move {after_move}")
    out.append(_status(state, view))
    out.append("")

    seats = [seat] if seat is not None else list(range(rules.players))
    rows = [("seat", "team", "name", "cards", "hand")]
    for p in seats:
        cards = hand_codes(state.hands[p]) if state.hands else []
        mark = "*" if p == view["to_act"] else ""
        rows.append((f"{p}{mark}", str(rules.team_of(p)), str(names.get(p) or ""), str(len(cards)), " ".join(cards)))
    out += _table(rows)
    if seat is not None:
        others = ", ".join(f"seat {p}: {n}{_known(view, p)}" for p, n in enumerate(view["hand_sizes"]) if p != seat)
        out.append(f"other hands: {others}")
    out.append("")

    for team in range(rules.teams):
        members = ", ".join(str(p) for p in range(rules.players) if rules.team_of(p) == team)
        opened = view["opened"][team] if view["opened"] else False
        minimum = view["opening_minimums"][team] if view["opening_minimums"] else None
        state_word = "opened" if opened else f"not opened (minimum {minimum})"
        out.append(f"team {team} (seats {members}): {state_word}; total {view['totals'][team]}")
        melds = view["melds"][team] if view["melds"] else []
        if not melds:
            out.append("  melds: none")
        for m in melds:
            kind = f"canasta ({m['canasta']})" if m["canasta"] else f"{len(m['cards'])} cards"
            wilds = f"{m['wilds']} wild" + ("" if m["wilds"] == 1 else "s")
            out.append(f"  meld {m['rank']}: {' '.join(m['cards'])}  [{kind}, {wilds}]")
        red = view["red_threes"][team] if view["red_threes"] else []
        out.append(f"  red threes: {' '.join(red) if red else 'none'}")
        if view["penalties"] and view["penalties"][team]:
            out.append(f"  penalties this hand: {view['penalties'][team]}")
    out.append("")

    pile = view["pile"]
    line = f"pile: {pile['size']} cards"
    if pile["top"]:
        line += f", top {pile['top']}"
    if pile["beside"]:
        line += f", beside it {' '.join(pile['beside'])}"
    if pile["frozen_by"]:
        beside = any(r["reason"] == "wild_beside_pile" for r in pile["reasons"])
        line += f", frozen by {pile['frozen_by']}" + (" beside the pile" if beside else "")
    elif pile["frozen_for_teams"]:
        line += f", frozen for team(s) {', '.join(str(t) for t in pile['frozen_for_teams'])} (not opened)"
    if pile["locked_until_seat"] is not None:
        line += f", locked until seat {pile['locked_until_seat']}'s turn"
    out.append(line)
    if len(pile["cards"]) > 1:
        out.append(f"  pile cards, bottom first: {' '.join(pile['cards'])}")
    out.append(f"stock: {view['stock_size']} cards")

    if seat is not None and state.phase not in ("deal", "over"):
        out.append("")
        out.append(_legal(view["legal"]))
    result = view["last_hand"] if state.phase in ("deal", "over") else None
    if result:
        out.append("")
        out.append(f"hand {result['hand_end']} ended: {result['reason']} by seat {result['by']}")
        out += _scores(result["scores"])
    return "\n".join(out)


def _known(view: dict[str, Any], seat: int) -> str:
    """The cards ``seat`` was seen to take with the pile and still holds (public)."""
    known = view["known_from_pile"][seat] if view.get("known_from_pile") else []
    return f" (known: {' '.join(known)})" if known else ""


def _status(state: engine.State, view: dict[str, Any]) -> str:
    if state.phase == "over":
        result = view["result"] or {}
        winner = result.get("winner")
        return "game over: " + ("a draw" if winner is None else f"team {winner} wins") + _why(state)
    if state.phase == "deal":
        return "between hands: the next deal comes"
    doing = {"draw": "to draw", "play": "to meld or discard", "answer": f"to answer seat {view['turn']}'s question"}
    return f"to act: seat {view['to_act']} ({doing.get(state.phase, state.phase)})"


def _why(state: engine.State) -> str:
    """Why the game ended, with the rule that ended it (docs/rules.md, "Limits")."""
    reason = (state.game_result or {}).get("reason")
    rules = state.rules
    if reason == "target":
        return f" (a side reached the target of {rules.scoring.target_score} points)"
    if reason == "hand_limit":
        n = rules.limits.max_hands
        return f" (the game ended at the hand limit: {n} hand{'' if n == 1 else 's'})"
    if reason == "move_limit":
        return f" (the game ended at the move limit: a hand reached {rules.limits.max_moves_per_hand} moves)"
    return ""


def _legal(legal: dict[str, Any]) -> str:
    if not legal["to_act"]:
        return "not this seat's turn"
    parts = []
    for key, word in (("may_draw", "draw"), ("may_take_pile", "take the pile"), ("may_pass", "pass"),
                      ("may_ask_go_out", "ask to go out"), ("must_answer_go_out", "answer"),
                      ("may_go_out", "go out")):
        if legal[key]:
            parts.append(word)
    if legal["meld_ranks"]:
        parts.append("meld " + " ".join(legal["meld_ranks"]))
    if legal["add_ranks"]:
        parts.append("add to " + " ".join(legal["add_ranks"]))
    if legal["discards"]:
        parts.append("discard " + " ".join(legal["discards"]))
    return f"may: {'; '.join(parts)} ({legal['actions']} legal actions)"


def _scores(rows: list[dict[str, Any]]) -> list[str]:
    fields = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand", "hand_total", "total")
    table: list[tuple[str, ...]] = [("team", *fields)]
    table += [(str(r["team"]), *(str(r[f]) for f in fields)) for r in rows]
    return _table(table, right=True)


def _table(rows: Sequence[Sequence[str]], right: bool = False) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if right or i < 2 or i == 3 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out

