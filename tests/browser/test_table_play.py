"""The table as card players expect it (issue 35): running points, a phone you can play on,
the other seats' moves shown one at a time, refusals in card symbols, why a move is not
allowed, and the wording of the moves told. Real server, bot worker and Chromium, as
test_table.py."""

from __future__ import annotations

import re
import time

import pytest
from browser_pages import Pages
from browser_player import play_one_move, version, wait_for_turn
from playwright.sync_api import Page, expect

from client import ApiProblem, Client
from tests.browser.test_table import (
    _drawn_with_melds,
    _game_where_the_pile_may_be_taken,
    _game_with_a_meld_to_make,
    _select,
    _table,
    _wait_status,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
RAW_CODE = re.compile(r"\b(?:[2-9TJQKA][SHDC]|JK)\b")  # a card as the API writes it: never shown
PACE_MS = 350  # the "fast" pace of the table's setting


def _points(page: Page, team: int) -> int:
    return int(page.locator(f"#points-{team} strong").get_attribute("data-points") or "nan")


def _no_sideways_scroll(page: Page, where: str) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"{where}: the page scrolls sideways: {width}"


def test_running_points_show_after_a_meld(pages: Pages, api: Client) -> None:
    game_id, seat, token = _game_with_a_meld_to_make(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    view = api.game(game_id, token).body["view"]
    team = view["team"]
    assert view["running"][team]["melds"] == 0
    assert _points(page, team) == view["running"][team]["on_table"]  # red threes may count already
    expect(page.locator(f"#points-{team}")).to_contain_text("first meld needs")
    before = version(page)
    page.click("#suggest-0")
    expect(_table(page)).to_have_attribute("data-version", str(before + 1))
    running = api.game(game_id, token).body["view"]["running"]
    assert running[team]["melds"] > 0
    assert _points(page, team) == running[team]["on_table"]  # the server's figure, shown as it is
    expect(page.locator(f"#points-{team}")).to_contain_text(f"melds {running[team]['melds']}")
    expect(page.locator(f"#points-{team}")).not_to_contain_text("first meld needs")
    need = running[team]["canastas_to_go_out"]
    if need:
        expect(page.locator(f"#points-{team}")).to_contain_text(f"{need} more canasta")
    hand_points = api.game(game_id, token).body["view"]["hand_points"]
    expect(page.locator("#hand-points")).to_have_text(f", {hand_points} points")
    pages.shot(page, "running-points")


def test_a_refusal_names_cards_with_their_symbols(pages: Pages, api: Client) -> None:
    game_id, seat, token, _take = _game_where_the_pile_may_be_taken(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    view = api.game(game_id, token).body["view"]
    top = view["pile"]["top"]
    odd = next(c for c in view["hand"] if c != "JK" and c[0] not in ("2", "3", top[0]))
    _select(page, [odd])
    page.click("#act-take")
    page.click("#take-selected")
    message = page.locator("#message")
    expect(message).not_to_be_empty()
    with pytest.raises(ApiProblem) as refused:
        api.move(game_id, token, {"type": "take_pile", "with": [odd]}, f'"{version(page)}"', dry_run=True)
    assert RAW_CODE.search(refused.value.detail), refused.value.detail  # the server names cards by code
    text = message.inner_text()
    assert not RAW_CODE.search(text.replace(refused.value.code, "")), text
    assert re.search(r"[♠♥♦♣]", text), text
    pages.shot(page, "refusal-in-symbols")


def test_clear_selection_keeps_the_take_chooser_open(pages: Pages, api: Client) -> None:
    game_id, seat, token, take = _game_where_the_pile_may_be_taken(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    _select(page, take["with"])
    page.click("#act-take")
    expect(page.locator("#take-chooser")).to_be_visible()
    page.click("#act-clear")
    expect(page.locator("#hand button.card[aria-pressed='true']")).to_have_count(0)
    expect(page.locator("#take-chooser")).to_be_visible()
    page.keyboard.press("Escape")  # with nothing selected, Esc closes it
    expect(page.locator("#take-chooser")).to_have_count(0)


def _game_with_a_meld_not_to_add_to(api: Client) -> tuple[str, int, str, str, str]:
    """A two-player game (test seeds) whose seat to act has drawn and melded, and holds a card
    of another rank than a meld it may not add to now: the game, seat, token, rank, card."""
    for game_id, seat, token, player, melds in _drawn_with_melds(api, range(1, 300)):
        view = player.move(melds[0])["view"]
        ranks = [m["rank"] for m in view["melds"][view["team"]] if m["rank"] not in view["legal"]["add_ranks"]]
        others = [c for c in view["hand"] if c != "JK" and c[0] not in ("2", "3", *ranks)]
        if ranks and others and view["legal"]["to_act"]:
            return game_id, seat, token, ranks[0], others[0]
    raise AssertionError("no seed gives a meld that cannot be added to")


def test_a_move_not_allowed_says_why_from_the_server(pages: Pages, api: Client) -> None:
    game_id, seat, token, rank, other = _game_with_a_meld_not_to_add_to(api)
    page = pages.new(f"/#game={game_id}&seat={seat}&token={token}")
    expect(_table(page)).to_have_attribute("data-my-turn", "true")
    before = version(page)
    # D after drawing: the button is dimmed, and pressing it tells the server's reason
    expect(page.locator("#act-draw")).to_have_attribute("aria-disabled", "true")
    page.keyboard.press("d")
    expect(page.locator("#why")).to_have_text(re.compile("already drawn"))
    expect(page.locator("#why")).to_have_attribute("data-code", "already_drew")
    # a meld of the side that the hand cannot add to now: its button is there, dimmed
    button = page.locator(f"#act-add-{rank}")
    expect(button).to_have_attribute("aria-disabled", "true")
    button.click(force=True)  # nothing selected: what to do first
    expect(page.locator("#why")).to_contain_text("Select the cards to add first")
    _select(page, [other])
    expect(page.locator("#why")).to_have_count(0)  # a new choice: the old answer is gone
    button.click(force=True)  # a dimmed move is still pressed: it says why
    with pytest.raises(ApiProblem) as refused:
        api.move(game_id, token, {"type": "add", "rank": rank, "cards": [other]}, f'"{before}"', dry_run=True)
    why = page.locator("#why")
    expect(why).to_have_attribute("data-code", refused.value.code)
    expect(why).to_have_attribute("data-for", f"add-{rank}")
    assert not RAW_CODE.search(why.inner_text()), why.inner_text()
    expect(button).to_have_attribute("aria-describedby", "why")
    assert version(page) == before  # asking changed nothing
    pages.shot(page, "why-not")


def _watch_moves(page: Page) -> None:
    """Record, in the page, each move the table shows: its text and when it appeared."""
    page.evaluate(r"""() => {
      window.shown = [];
      const seen = () => {
        const now = document.querySelector('#now-playing span')?.textContent.replace(/^▶\s*/, '');
        const last = window.shown[window.shown.length - 1];
        if (now && (!last || last.text !== now)) window.shown.push({ text: now, at: performance.now(),
          version: Number(document.querySelector('#table')?.dataset.version) });
      };
      new MutationObserver(seen).observe(document.getElementById('main'), { childList: true, subtree: true });
    }""")


def _play_my_turn(page: Page) -> None:
    while _table(page).get_attribute("data-my-turn") == "true":
        play_one_move(page)


def test_the_other_seats_moves_are_shown_one_at_a_time(pages: Pages, api: Client) -> None:
    page = pages.new("/", pace=PACE_MS)
    page.fill("#my-name", "ann")
    page.select_option("#preset", "finnish")
    page.click("#create")  # three bots: straight to the table, no "Play your seat" click
    expect(_table(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#pace")).to_have_value(str(PACE_MS))
    game_id = re.search(r"#game=([^&]+)", page.url).group(1)
    assert wait_for_turn(page) == "turn"
    _watch_moves(page)
    _play_my_turn(page)
    assert wait_for_turn(page, 60) == "turn"
    # the board shows the newest view at once (the seat may act at once); the bots' moves are
    # still being told at the pace: read them once the telling is over
    page.wait_for_function("() => window.shown.filter(s => !s.text.startsWith('You ')).length >= 3", timeout=30_000)
    expect(page.locator("#now-playing")).to_have_count(0, timeout=30_000)
    shown = page.evaluate("window.shown")
    bot_moves = [s for s in shown if not s["text"].startswith("You ")]
    assert len(bot_moves) >= 3, shown  # three bots, each a draw and a discard at least
    gaps = [b["at"] - a["at"] for a, b in zip(shown, shown[1:], strict=False)]
    assert all(gap >= PACE_MS * 0.8 for gap in gaps), gaps  # each held for the pace
    assert all(re.match(r"Standard bot \(seat \d\) ", s["text"]) for s in bot_moves), shown
    versions = [s["version"] for s in shown]
    assert versions == sorted(versions), versions  # the board never goes back
    assert version(page) == api.game(game_id).body["version"]

    # Skip: the rest at once
    page.select_option("#pace", "1600")
    _play_my_turn(page)
    page.wait_for_selector("#now-playing")
    pages.shot(page, "bots-one-at-a-time")
    expect(page.locator(".seat.moving")).to_have_count(1)
    started = time.monotonic()
    page.click("#skip")
    # the moves left would take 1.6 s each (at least five: the bots draw and discard); a loaded
    # machine may take a few seconds to click and render, never that long
    expect(page.locator("#now-playing")).to_have_count(0, timeout=5000)
    assert time.monotonic() - started < 5


def test_a_phone_scrolls_only_down_and_shows_the_pile_when_drawing(pages: Pages, api: Client) -> None:
    page = pages.new("/", **PHONE)
    expect(page.locator("#seat-specs select")).to_have_count(3)
    _no_sideways_scroll(page, "start page")
    pages.shot(page, "phone-start", full_page=False)
    page.fill("#my-name", "ann")
    page.select_option("#preset", "finnish-2p")
    page.click("#create")
    expect(_table(page)).to_have_attribute("data-status", "playing")
    for _ in range(4):
        assert wait_for_turn(page) == "turn"
        if _table(page).get_attribute("data-phase") == "draw":
            break
        play_one_move(page)
    expect(_table(page)).to_have_attribute("data-phase", "draw")
    _no_sideways_scroll(page, "the table")
    top = page.locator("#pile-top").bounding_box()
    assert top is not None and top["y"] + top["height"] <= PHONE["viewport"]["height"], top  # in the first screen
    for box in (page.locator("#hand button.card").first.bounding_box(), page.locator("#act-draw").bounding_box()):
        assert box is not None and box["height"] >= 40, box  # big enough for a finger
    label = page.locator("#hand button.card").first.get_attribute("aria-label")
    assert re.fullmatch(r"(two|three|four|five|six|seven|eight|nine|ten|ace|jack|queen|king) of "
                        r"(hearts|spades|diamonds|clubs)|joker", label or ""), label
    pages.shot(page, "phone", full_page=False)

    # the end of a game and its replay: bots only, one hand
    game = api.create_game("finnish", [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}],
                           rules={"target_score": 1})
    _wait_status(api, game["id"], "over")
    page.goto(f"/#game={game['id']}")
    expect(page.locator("#game-result")).to_be_visible()
    _no_sideways_scroll(page, "the end of the game")
    total = page.locator(".banner table.scores tr[data-part='total'] td").last.bounding_box()
    assert total is not None and total["x"] + total["width"] <= PHONE["viewport"]["width"], total
    pages.shot(page, "phone-game-over")
    page.click("#replay-link")
    expect(page.locator("#replay-view")).to_be_visible()
    _no_sideways_scroll(page, "the replay")
    pages.shot(page, "phone-replay", full_page=False)


def test_moves_are_told_in_plain_sentences(pages: Pages, api: Client) -> None:
    """One name for a bot everywhere ("greedy bot (seat 1)"), one sentence per thing that
    happened, no doubled marks; in a replay and on the table."""
    game = api.create_game("finnish", [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}],
                           rules={"target_score": 1})
    _wait_status(api, game["id"], "over")
    page = pages.new(f"/#replay={game['id']}")
    view = page.locator("#replay-view")
    expect(view).to_be_visible()
    frames = int(view.get_attribute("data-frames") or 0)
    texts = []
    page.keyboard.press("Home")
    for _ in range(min(frames - 1, 40)):
        page.keyboard.press("ArrowRight")
        texts.append(page.locator("#rp-what").inner_text())
    page.keyboard.press("End")
    texts.append(page.locator("#rp-what").inner_text())
    for text in texts:
        assert not re.search(r"[?.!]\.|\.\.", text), text
        assert not re.search(r"seat \d \(\w+ bot\)", text), text
        assert re.match(r"Move \d+: (Greedy|Random) bot \(seat \d\) ", text), text
        assert not re.search(r"red threes [2-9TJQKA]?[♠♥♦♣]\S*\.?$", text) or "2 red threes" in text, text
    body = page.locator("body").inner_text()
    assert not re.search(r"seat \d \(\w+ bot\)", body)
    expect(page.locator("#side-0 h3")).to_contain_text("greedy bot (seat 0)")
