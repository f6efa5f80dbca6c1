"""The web table in a real browser (Debian's Chromium through Playwright) against a real API
server, bot worker and Redis. Moves under test are made by clicking or with the keyboard;
the API is called directly only to set a game up or to check what the page shows."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from browser_pages import DESKTOP, Pages, copy_readme_screenshot
from browser_player import enabled, play_one_move, play_to_the_end, version, wait_for_turn
from playwright.sync_api import Page, Request, expect

from client import ApiProblem, Client, Seat

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SYNC_SECONDS = 1.0  # a move shows in another browser within this
README_MOVES = 9  # the README's screenshot is taken after this many of our moves
README_VIEWPORT = {"width": 1200, "height": 960}  # the table down to the moves, without the log


def _table(page: Page) -> Any:
    return page.locator("#table")


def _wait_status(api: Client, game_id: str, status: str, timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body = api.game(game_id).body
        if body["status"] == status:
            return body
        time.sleep(0.2)
    raise AssertionError(f"game {game_id} is not {status} after {timeout_s} s")


def _token_of(page: Page) -> str:
    found = re.search(r"[#&]token=([A-Za-z0-9_-]+)", page.url)
    assert found, page.url
    return found.group(1)


def test_a_whole_game_against_three_bots_played_by_clicking(pages: Pages, api: Client) -> None:
    page = pages.new("/", viewport=README_VIEWPORT)
    page.fill("#my-name", "ann")
    page.select_option("#preset", "finnish")
    page.select_option("#seat-1", "bot:greedy")
    page.select_option("#seat-2", "bot:expert")
    page.select_option("#seat-3", "bot:random")
    page.click("#advanced summary")
    page.fill("#target-score", "1")  # one hand decides it
    pages.shot(page, "start-page")
    page.click("#create")  # every other seat a bot: no link to hand out, straight to the table
    expect(_table(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#seat-links")).to_have_count(0)
    assert "token=" not in (page.evaluate("location.search") or "")  # the token is in the fragment only
    game_id = re.search(r"#game=([^&]+)", page.url).group(1)
    expect(page.locator("#hand button.card")).not_to_have_count(0)

    made: list[str] = []
    while len(made) < README_MOVES:
        if wait_for_turn(page) == "over":
            break
        made.append(play_one_move(page))
    else:
        wait_for_turn(page)
        page.locator("#hand button.card").last.click()  # a selected card, for the picture
        copy_readme_screenshot(pages.shot(page, "table", full_page=False))
        page.keyboard.press("Escape")
        expect(page.locator("#hand button.card[aria-pressed='true']")).to_have_count(0)
    made += play_to_the_end(page)

    assert "draw" in made and ("discard" in made or "go out" in made), made
    final = api.game(game_id).body
    assert final["status"] == "over"
    result = final["view"]["result"]
    banner = page.locator("#game-result")
    expect(banner).to_contain_text("Game over")
    for total in result["totals"]:
        expect(banner).to_contain_text(str(total))
    sides = page.locator(".banner table.scores thead th")  # a column per side, a row per part
    expect(sides).to_have_count(len(result["totals"]))
    totals = page.locator(".banner table.scores tr[data-part='total'] td")
    expect(totals).to_have_text([str(row["total"]) for row in final["view"]["last_hand"]["scores"]])
    expect(page.locator("#event-log li").first).to_contain_text("The game is over")
    expect(page.locator("#conn")).to_contain_text("stream closed")
    for button in page.locator("#actions button").all():
        assert button.is_disabled() or button.get_attribute("id") == "act-clear"
    pages.shot(page, "game-over")
    page.click("#replay-link")
    expect(page.locator("#replay-view")).to_be_visible()


def ann_creates_a_game_with_an_open_seat(pages: Pages) -> Page:
    """The start page: ann creates a two-player game whose other seat is open."""
    page = pages.new("/")
    page.fill("#my-name", "ann")
    page.select_option("#preset", "finnish-2p")
    page.select_option("#seat-1", "open")
    page.click("#create")
    return page


def test_a_move_in_one_browser_shows_in_another_within_a_second(pages: Pages) -> None:
    host = ann_creates_a_game_with_an_open_seat(pages)
    join_link = host.locator("#seat-links li[data-seat='1'] input").input_value()
    assert "#game=" in join_link and "join=1" in join_link and "token" not in join_link
    host.click("#play-link")
    expect(host.locator("#waiting")).to_contain_text("Waiting for players")

    guest = pages.new(join_link)
    guest.fill("#join-name", "bea")
    guest.click("#join")
    expect(_table(guest)).to_have_attribute("data-status", "playing")
    assert "join=" not in guest.url and "token=" in guest.url
    expect(_table(host)).to_have_attribute("data-status", "playing")  # the host heard the join
    expect(host.locator("#seats")).to_contain_text("bea (seat 1)")

    mover, watcher = (host, guest) if _table(host).get_attribute("data-my-turn") == "true" else (guest, host)
    expect(_table(mover)).to_have_attribute("data-my-turn", "true")
    # with the keyboard: D draws, then a card is focused and selected with Space, X discards
    before = version(mover)
    started = time.monotonic()
    mover.keyboard.press("d")
    expect(_table(watcher)).to_have_attribute("data-version", str(before + 1), timeout=SYNC_SECONDS * 1000 + 500)
    assert time.monotonic() - started < SYNC_SECONDS
    # the watcher learns how many cards were drawn, never which (the mover's log names them)
    # (a red three laid with the draw is a sentence of its own, after it)
    drew = re.compile(r"^\w+ \(seat \d\) drew \d+ cards\.$")
    expect(watcher.locator("#event-log li").filter(has_text=drew)).to_have_count(1)
    expect(mover.locator("#event-log li").filter(has_text=re.compile(r"^You drew \d+ cards \("))).to_have_count(1)

    cards = mover.locator("#hand button.card")
    expect(cards).not_to_have_count(0)
    for i in range(cards.count()):
        cards.nth(i).focus()
        mover.keyboard.press("Space")
        if enabled(mover, "#act-discard"):
            break
        mover.keyboard.press("Space")
    card = mover.locator("#hand button.card[aria-pressed='true']").first
    name = card.get_attribute("aria-label")
    started = time.monotonic()
    mover.keyboard.press("x")
    expect(watcher.locator("#pile-top")).to_have_attribute("aria-label", name, timeout=SYNC_SECONDS * 1000 + 500)
    assert time.monotonic() - started < SYNC_SECONDS
    expect(_table(watcher)).to_have_attribute("data-my-turn", "true")
    # the discarded card is gone; the keyboard's focus stays in the hand, to go on from
    assert mover.evaluate("document.activeElement.closest('#hand') !== null")
    pages.shot(watcher, "synced")


def test_an_open_seat_is_handed_to_a_bot(pages: Pages) -> None:
    page = ann_creates_a_game_with_an_open_seat(pages)
    page.click("#play-link")
    expect(page.locator("#waiting")).to_be_visible()
    page.locator("#waiting select").select_option("expert")
    page.click("#waiting button:has-text('Let a bot play seat 1')")
    expect(_table(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#seats")).to_contain_text("expert bot (seat 1)")
    expect(page.locator("#event-log")).to_contain_text("Hand 1 is dealt")


def _drawn_with_melds(api: Client, seeds: range) -> Iterator[tuple[str, int, str, Seat, list[dict]]]:
    """Two-player games (test seeds) whose seat to act has drawn and may meld: the game,
    the seat, its token, its client seat and the melds it may make."""
    for seed in seeds:
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        seat = game["view"]["to_act"]
        player = api.seat(game["id"], tokens[seat])
        player.move({"type": "draw"})
        melds = player.view()["view"]["legal"]["melds"]
        if melds:
            yield game["id"], seat, tokens[seat], player, melds


def _game_with_a_meld_to_make(api: Client) -> tuple[str, int, str]:
    """A two-player game where the seat to act has drawn and may meld (test seeds)."""
    for game_id, seat, token, _, _ in _drawn_with_melds(api, range(1, 200)):
        return game_id, seat, token
    raise AssertionError("no seed gives a meld")


def test_an_illegal_move_shows_the_servers_message_and_changes_nothing(pages: Pages, api: Client) -> None:
    game_id, seat, token = _game_with_a_meld_to_make(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    hand = page.locator("#hand button.card")
    expect(hand).not_to_have_count(0)
    before_cards = [hand.nth(i).get_attribute("aria-label") for i in range(hand.count())]
    before_version = version(page)
    # two natural cards of different ranks: a meld the engine refuses
    codes = [hand.nth(i).get_attribute("data-code") for i in range(hand.count())]
    naturals = [c for c in codes if c != "JK" and c[0] not in "23"]
    first = naturals[0]
    second = next(c for c in naturals if c[0] != first[0])
    page.locator(f"#hand button.card[data-code='{first}']").first.click()
    page.locator(f"#hand button.card[data-code='{second}']").first.click()
    expect(page.locator("#act-meld")).to_be_enabled()
    page.click("#act-meld")

    message = page.locator("#message")
    expect(message).not_to_be_empty()
    with pytest.raises(ApiProblem) as refused:  # what the server says of this move
        api.move(game_id, token, {"type": "meld", "melds": [[first, second]]}, f'"{before_version}"', dry_run=True)
    assert refused.value.status == 422
    expect(message).to_contain_text(refused.value.detail)
    expect(message).to_contain_text(refused.value.code)
    # nothing changed: the page's version and hand, the server's game, the player's choice
    assert version(page) == before_version
    assert [hand.nth(i).get_attribute("aria-label") for i in range(hand.count())] == before_cards
    assert api.game(game_id, token).body["version"] == before_version
    expect(page.locator("#hand button.card[aria-pressed='true']")).to_have_count(2)
    pages.shot(page, "illegal-move")


def _game_where_the_pile_may_be_taken(api: Client) -> tuple[str, int, str, dict[str, Any]]:
    """A two-player game whose first player may take the pile (test seeds): its first way."""
    for seed in range(1, 400):
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        seat = game["view"]["to_act"]
        legal = api.game(game["id"], tokens[seat]).body["view"]["legal"]
        takes = [a for a in legal["take_pile"] if a.get("with")]
        if takes:
            return game["id"], seat, tokens[seat], takes[0]
    raise AssertionError("no seed lets the first player take the pile")


def _select(page: Page, codes: list[str]) -> None:
    for code in codes:
        page.locator(f"#hand button.card[data-code='{code}'][aria-pressed='false']").first.click()


def test_the_pile_is_taken_with_the_cards_chosen(pages: Pages, api: Client) -> None:
    game_id, seat, token, take = _game_where_the_pile_may_be_taken(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    pile = int(page.locator("#pile-size").inner_text().split()[0])
    hand = page.locator("#hand button.card")
    held = hand.count()
    # the melds that go with the take (an opening needs them) are set aside first, with G
    for meld in take.get("melds", []):
        _select(page, meld)
        page.keyboard.press("g")
    expect(page.locator("#staged .staged-meld")).to_have_count(len(take.get("melds", [])))
    _select(page, take["with"])
    page.click("#act-take")
    chooser = page.locator("#take-chooser")
    expect(chooser).to_be_visible()
    expect(chooser.locator("button.take-option")).not_to_have_count(0)
    before = version(page)
    page.click("#take-selected")
    expect(_table(page)).to_have_attribute("data-version", str(before + 1))
    expect(page.locator("#message")).to_be_empty()
    expect(page.locator("#pile-size")).to_have_text("0 cards")
    laid = len(take["with"]) + 1 + sum(len(m) for m in take.get("melds", []))
    expect(hand).to_have_count(held + pile - laid)
    expect(page.locator(f"#side-{api.game(game_id, token).body['view']['team']} .meld")).to_have_count(
        1 + len(take.get("melds", [])))
    pages.shot(page, "pile-taken")


def test_a_spectator_sees_no_hand(pages: Pages, api: Client) -> None:
    game = api.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}],
                           seed=4, rules={"target_score": 1})
    token = game["seats"][0]["token"]
    ann = api.seat(game["id"], token)
    deadline = time.monotonic() + 30
    while ann.view()["view"]["to_act"] != 0:  # the bots before ann play their turns
        assert time.monotonic() < deadline
        time.sleep(0.1)

    requests: list[Request] = []
    page = pages.new("about:blank", viewport=DESKTOP)
    page.on("request", lambda r: requests.append(r))
    page.goto(f"/#game={game['id']}")
    expect(_table(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#spectator-note")).to_be_visible()
    expect(page.locator("#hand")).to_have_count(0)
    expect(page.locator("#my-area")).to_have_count(0)
    expect(page.locator("button.card")).to_have_count(0)
    expect(page.locator("#seats")).to_contain_text("11 cards")

    ann.move({"type": "draw"})  # the spectator hears of it, without the card
    # the spectator hears of the draw, never of the card ("drew a card (K♥)" is for ann only)
    expect(page.locator("#event-log li").first).to_have_text(re.compile(r"^ann \(seat 0\) drew a card[.;]"))
    pages.shot(page, "spectator")
    assert requests and all("authorization" not in r.all_headers() for r in requests)
    assert all(token not in r.url for r in requests)


def test_a_finished_game_replays_to_its_final_position(pages: Pages, api: Client) -> None:
    game = api.create_game("finnish", [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}],
                           rules={"target_score": 1})
    final = _wait_status(api, game["id"], "over")["view"]
    moves = final["moves"]
    page = pages.new(f"/#replay={game['id']}")
    view = page.locator("#replay-view")
    expect(view).to_be_visible()
    frames = int(view.get_attribute("data-frames"))
    assert frames == moves + final["hand_no"]  # a frame per move and per deal
    # it opens at the end: the game's final position
    expect(view).to_have_attribute("data-frame", str(frames - 1))
    expect(view).to_have_attribute("data-move", str(moves))
    result = page.locator("#game-result")
    for total in final["result"]["totals"]:
        expect(result).to_contain_text(str(total))
    expect(page.locator("#pile-size")).to_have_text(f"{final['pile']['size']} card{'' if final['pile']['size'] == 1 else 's'}")
    for team, melds in enumerate(final["melds"]):
        expect(page.locator(f"#side-{team} .meld")).to_have_count(len(melds))
    for seat, size in enumerate(final["hand_sizes"]):
        expect(page.locator(f"#all-hands li[data-seat='{seat}'] .card")).to_have_count(size)
    pages.shot(page, "replay-final")

    # backwards and forwards, by clicking and with the keyboard
    page.click("#rp-prev")
    expect(view).to_have_attribute("data-move", str(moves - 1))
    expect(page.locator("#game-result")).to_have_count(0)
    page.click("#rp-next")
    expect(view).to_have_attribute("data-move", str(moves))
    page.keyboard.press("Home")
    expect(view).to_have_attribute("data-frame", "0")
    expect(page.locator("#rp-what")).to_contain_text("Hand 1 is dealt")
    expect(page.locator("#all-hands li[data-seat='0'] .card")).to_have_count(11)
    page.keyboard.press("ArrowRight")
    expect(view).to_have_attribute("data-move", "1")
    page.keyboard.press("ArrowLeft")
    expect(view).to_have_attribute("data-frame", "0")
    page.keyboard.press("End")
    expect(view).to_have_attribute("data-frame", str(frames - 1))
    page.click("#rp-prev")
    page.click("#rp-prev")
    page.click("#rp-play")
    expect(view).to_have_attribute("data-frame", str(frames - 1), timeout=5000)
    expect(page.locator("#game-result")).to_be_visible()

    # the same game from its log file, chosen on the start page
    log = api.log_bytes(game["id"])
    page.goto("/")
    page.set_input_files("#log-file", {"name": "game.jsonl", "mimeType": "application/x-ndjson",
                                       "buffer": log})
    page.click("#replay-file")
    expect(view).to_have_attribute("data-frames", str(frames))
    expect(view).to_have_attribute("data-move", str(moves))
    expect(page.locator("#rp-what")).to_contain_text(f"Move {moves}:")


def _is_stream(r: Request) -> bool:
    return r.url.endswith("/events") and r.all_headers().get("accept") == "text/event-stream"


def test_the_stream_starts_at_the_first_reads_cursor_and_resumes_with_last_event_id(pages: Pages, api: Client) -> None:
    game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=2)
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    other = 1 - game["view"]["to_act"]
    requests: list[Request] = []
    page = pages.new("about:blank")
    page.on("request", lambda r: requests.append(r) if r.url.endswith("/events") else None)
    page.goto(f"/#game={game['id']}&seat={other}&token={tokens[other]}")
    expect(_table(page)).to_have_attribute("data-status", "playing")
    deadline = time.monotonic() + 15
    while len([r for r in requests if _is_stream(r)]) < 2:  # the server ends each stream after a few seconds
        assert time.monotonic() < deadline, "the table did not come back after its stream ended"
        page.wait_for_timeout(200)
    read, streams = requests[0], [r for r in requests if _is_stream(r)]
    assert not _is_stream(read)  # the first read: the view and its cursor, as JSON
    response = read.response()
    assert response is not None
    cursor = response.json()["last_id"]
    first, again = streams[0].all_headers(), streams[1].all_headers()
    assert first["last-event-id"] == cursor  # the stream starts where the first read ended
    assert re.fullmatch(r"\d+-\d+", again["last-event-id"])
    for r in (read, *streams[:2]):
        assert r.all_headers()["authorization"] == f"Bearer {tokens[other]}"
    assert all(tokens[other] not in r.url for r in requests)
    # and it is live again: the other seat's move shows at once
    mover = api.seat(game["id"], tokens[1 - other])
    before = version(page)
    mover.move({"type": "draw"})
    expect(_table(page)).to_have_attribute("data-version", str(before + 1), timeout=SYNC_SECONDS * 1000 + 500)
    expect(page.locator("#conn")).to_contain_text("live")


def test_a_change_before_the_stream_starts_is_told_in_the_log(pages: Pages, api: Client) -> None:
    """The table's first read and its stream are two requests; a change between them (a bot
    seated by a quick click, the deal it starts) is told in the log, not skipped: the stream
    resumes from the read's cursor. Started from its own snapshot, it lost those lines."""
    game = api.create_game("finnish-2p", [{"name": "ann"}, None])
    token = next(s["token"] for s in game["seats"] if s["seat"] == 0)
    held: list[Any] = []  # the table's stream requests, kept from the server until the bot is seated
    holding = [True]

    def hold(route: Any) -> None:
        if holding[0] and _is_stream(route.request):
            held.append(route)
        else:
            route.continue_()

    page = pages.new("about:blank")
    page.route("**/events", hold)
    page.goto(f"/#game={game['id']}&seat=0&token={token}")
    expect(_table(page)).to_have_attribute("data-status", "waiting")
    deadline = time.monotonic() + 15
    while not held:
        assert time.monotonic() < deadline, "the table opened no event stream"
        page.wait_for_timeout(50)
    api.seat_to_bot(game["id"], 1, "greedy", token)  # before the stream has started
    holding[0] = False
    for route in held:
        route.continue_()
    expect(page.locator("#event-log")).to_contain_text("Seat 1 is now played by a greedy bot")
    expect(page.locator("#event-log")).to_contain_text("Hand 1 is dealt")
    expect(_table(page)).to_have_attribute("data-status", "playing")


def _game_with_a_pile_to_take(api: Client, min_pile: int = 4) -> tuple[str, dict[int, str], dict[str, Any]]:
    """A two-player game (test seeds) whose pile has grown by draws and discards until the
    seat to act may take it in a way that keeps some of its cards in hand."""
    for seed in range(1, 60):
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        for _ in range(12):
            body = api.game(game["id"], tokens[0]).body
            seat = body["view"]["to_act"]
            player = api.seat(game["id"], tokens[seat])
            legal = player.view()["view"]["legal"]
            view = player.view()["view"]
            takes = [a for a in legal["take_pile"] if a.get("with")]
            if takes and view["pile"]["size"] >= min_pile:
                return game["id"], tokens, takes[0]
            if not legal["may_draw"]:
                break
            player.move({"type": "draw"})
            discards = player.view()["view"]["legal"]["discards"]
            if not discards:
                break
            player.move({"type": "discard", "card": discards[0]})
    raise AssertionError("no seed grows a pile that may be taken")


def _codes(page: Page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map((e) => e.dataset.code)")


def test_the_piles_cards_and_the_cards_seen_taken_with_it_show(pages: Pages, api: Client) -> None:
    game_id, tokens, take = _game_with_a_pile_to_take(api)
    page = pages.new(f"/#game={game_id}")  # a spectator: public knowledge only
    view = api.game(game_id).body["view"]
    expect(_table(page)).to_have_attribute("data-version", str(api.game(game_id).body["version"]))
    pile = view["pile"]["cards"]
    assert len(pile) >= 4 and pile[-1] == view["pile"]["top"]
    assert _codes(page, "#pile-cards .card") == pile  # in order, bottom first
    expect(page.locator("#pile-cards .card").last).to_have_attribute("aria-label", page.locator("#pile-top").get_attribute("aria-label"))
    for i, code in enumerate(pile):  # every card readable without colour: a symbol and a name
        face = page.locator("#pile-cards .card").nth(i)
        assert face.get_attribute("aria-label") and face.inner_text().strip() != code
    expect(page.locator("#seats .seat-known")).to_have_count(0)

    seat = view["to_act"]
    before = version(page)
    after = api.seat(game_id, tokens[seat]).move(take)["view"]
    known = after["known_from_pile"][seat]
    assert known, "the take keeps some of the pile's cards in hand"
    expect(_table(page)).to_have_attribute("data-version", str(before + 1))
    expect(page.locator("#pile-cards")).to_have_count(0)
    shown = _codes(page, f"#seats li[data-seat='{seat}'] .seat-known .card")
    assert sorted(shown) == sorted(known)
    expect(page.locator(f"#seats li[data-seat='{1 - seat}'] .seat-known")).to_have_count(0)
    pages.shot(page, "pile-known")


def _game_with_a_wild_to_discard(api: Client) -> tuple[str, Any, str]:
    """A two-player norwegian game (test seeds) whose seat to act has drawn and may discard
    a wild, which will lie beside the pile (R13): the game, that seat's client, the wild."""
    for seed in range(1, 60):
        game = api.create_game("norwegian", [{"name": "ann"}, {"name": "bea"}], players=2, seed=seed)
        tokens = {s["seat"]: s["token"] for s in game["seats"]}
        for _ in range(20):
            seat = api.game(game["id"]).body["view"]["to_act"]
            player = api.seat(game["id"], tokens[seat])
            if not player.view()["view"]["legal"]["may_draw"]:
                break
            player.move({"type": "draw"})
            discards = player.view()["view"]["legal"]["discards"]
            if not discards:
                break
            wilds = [c for c in discards if c == "JK" or c[0] == "2"]
            if wilds:
                return game["id"], player, wilds[0]
            player.move({"type": "discard", "card": discards[0]})
    raise AssertionError("no seed deals a wild to discard within ten turns each")


def test_a_wild_beside_the_pile_shows_and_is_named_as_its_freeze(pages: Pages, api: Client) -> None:
    game_id, player, wild = _game_with_a_wild_to_discard(api)
    page = pages.new(f"/#game={game_id}")  # a spectator: public knowledge only
    expect(_table(page)).to_have_attribute("data-version", str(api.game(game_id).body["version"]))
    top = api.game(game_id).body["view"]["pile"]["top"]
    player.move({"type": "discard", "card": wild})
    view = api.game(game_id).body["view"]
    assert view["pile"]["beside"] == [wild] and view["pile"]["top"] == top
    expect(_table(page)).to_have_attribute("data-version", str(api.game(game_id).body["version"]))
    assert _codes(page, "#pile-beside .card") == [wild]
    assert _codes(page, "#pile-cards .card") == view["pile"]["cards"]  # the wild is not in the pile
    name = page.locator("#pile-beside .card").first.get_attribute("aria-label")
    assert name and name != wild
    expect(page.locator("#pile-frozen")).to_contain_text(f"frozen by {name} beside the pile")
    expect(page.locator("#events")).to_contain_text(re.compile(r"discarded \S+ beside the pile\."))
    pages.shot(page, "pile-beside")


def test_a_game_ended_by_the_hand_limit_says_so(pages: Pages, api: Client) -> None:
    """Four random bots, a target no hand reaches and one hand allowed: the table and the
    replay say in words why the game ended (docs/rules.md, "Limits")."""
    game = api.create_game("classic", [{"bot": "random"}] * 4, rules={"target_score": 50000, "max_hands": 1})
    final = _wait_status(api, game["id"], "over")
    assert final["view"]["result"]["reason"] == "hand_limit"
    page = pages.new(f"/#game={game['id']}")
    expect(page.locator("#game-end-reason")).to_have_text(
        "The game ended at the hand limit (1 hand): no side reached the target.")
    page.click("#replay-link")
    expect(page.locator("#replay-view #game-end-reason")).to_contain_text("at the hand limit (1 hand)")
    expect(page.locator("#rp-what")).to_contain_text("The game is over at the hand limit: ")
