"""A Canasta bot that plays one seat of a running server over HTTP, with the Python client.

    python examples/bot.py http://127.0.0.1:8000 --game=ID --seat 2       # take open seat 2
    python examples/bot.py http://127.0.0.1:8000 --game=ID --token=TOKEN  # play a seat you hold

(Write ``--game=ID``: an id or token may start with ``-``, which would read as an option.)

It decides from the view's ``legal`` summary alone: go out when it can, take the pile when
it may, meld and add what it can, then discard its loneliest card. Start yours from here.
"""

from __future__ import annotations

import argparse
from collections import Counter

from client import ApiProblem, Client, StaleVersion


def choose(view: dict) -> dict:
    legal, hand = view["legal"], view["hand"]
    if legal["go_out"] and view["phase"] == "play":
        return legal["go_out"][0]
    if view["phase"] == "draw" and legal["take_pile"]:
        return legal["take_pile"][0]
    if view["phase"] == "play" and legal["melds"]:
        return legal["melds"][0]
    for rank in legal["add_ranks"]:  # keep two cards: one to discard, one left (going out is above)
        naturals = [card for card in hand if card[0] == rank][: len(hand) - 2]
        if naturals:
            return {"type": "add", "rank": rank, "cards": naturals}
    return plainest(legal, hand)


def plainest(legal: dict, hand: list[str]) -> dict:
    """A move that is always legal when offered: answer yes, draw, pass, or discard."""
    if legal["must_answer_go_out"]:
        return {"type": "answer_go_out", "yes": True}
    if legal["may_draw"] or legal["may_pass"]:
        return {"type": "draw" if legal["may_draw"] else "pass"}
    counts = Counter(card[0] for card in hand)  # keep wilds (2s, jokers); give up the rarest rank
    return {"type": "discard", "card": min(legal["discards"], key=lambda c: (c == "JK" or c[0] == "2", counts[c[0]]))}


def main() -> None:
    parser = argparse.ArgumentParser(description="Play one seat of a Canasta game over HTTP.")
    parser.add_argument("api", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--game", required=True, help="the game's id")
    parser.add_argument("--seat", type=int, help="an open seat to take")
    parser.add_argument("--token", help="or the token of a seat you hold")
    parser.add_argument("--name", default="example-bot")
    args = parser.parse_args()
    client = Client(args.api)
    seat = client.seat(args.game, args.token or client.join(args.game, args.seat, args.name)["token"])
    for _event in seat.stream():  # a snapshot, then every move; resumed after a dropped stream
        while seat.view()["status"] == "playing" and seat.my_turn:
            view = seat.last_view["view"]
            try:
                seat.move(choose(view))
            except StaleVersion:
                continue  # the game moved on since the view was read: read it, decide again
            except ApiProblem as e:  # refused: say why, and make the plainest move instead
                print(f"refused: {e.code}: {e.detail}")
                seat.move(plainest(view["legal"], view["hand"]))
    result = seat.view()["view"]["result"]
    print(f"game over: totals {result['totals']}, winner: team {result['winner']}")


if __name__ == "__main__":
    main()
