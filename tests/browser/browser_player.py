"""A player that plays a seat of the web table by clicking, as a person would: it reads only
what the page shows (which buttons are enabled) and never calls the API itself."""

from __future__ import annotations

import time

from playwright.sync_api import Page

TURN_TIMEOUT_S = 30.0


def enabled(page: Page, selector: str) -> bool:
    loc = page.locator(selector)
    return loc.count() > 0 and loc.first.is_enabled()


def version(page: Page) -> int:
    return int(page.locator("#table").get_attribute("data-version") or 0)


def wait_for_turn(page: Page, timeout_s: float = TURN_TIMEOUT_S) -> str:
    """Wait until this seat may act or the game is over; returns "turn" or "over"."""
    page.wait_for_selector('#table[data-my-turn="true"], #table[data-status="over"]', timeout=timeout_s * 1000)
    status = page.locator("#table").get_attribute("data-status")
    return "over" if status == "over" else "turn"


def wait_for_version_after(page: Page, before: int, timeout_s: float = 10.0) -> None:
    """The move was answered: the table shows a newer version, or the server's error."""
    page.wait_for_function(
        "(v) => Number(document.querySelector('#table')?.dataset.version) > v"
        " || document.querySelector('#message')?.textContent.trim()",
        arg=before, timeout=timeout_s * 1000)
    message = page.locator("#message").text_content() or ""
    assert not message.strip(), f"the server refused a move: {message}"


def play_one_move(page: Page) -> str:
    """Make one legal move by clicking; returns what was done."""
    before = version(page)
    done = _click_a_move(page)
    wait_for_version_after(page, before)
    return done


# The moves a player clicks when enabled, in order of preference: the button, what to click
# after it (the take's first choice of cards), and the move's name.
ONE_CLICK_MOVES = (
    ("#act-yes", (), "answer"),
    ("#act-goout", (), "go out"),
    ("#act-draw", (), "draw"),
    ("#act-take", ("#take-0",), "take pile"),
    ("#act-pass", (), "pass"),
    ("#suggest-0", (), "meld"),
)


def _click_a_move(page: Page) -> str:
    for button, then, name in ONE_CLICK_MOVES:
        if enabled(page, button):
            page.click(button)
            for follow_up in then:
                page.click(follow_up)
            return name
    for card in page.locator("#hand button.card").all():
        card.click()
        if enabled(page, "#act-discard"):
            page.click("#act-discard")
            return "discard"
        card.click()  # not a card that may be discarded: put it back
    raise AssertionError("no enabled move on the table: " + page.locator("#my-area").inner_text())


def play_to_the_end(page: Page, timeout_s: float = 300.0) -> list[str]:
    """Play this seat until the game is over; returns the moves made."""
    deadline = time.monotonic() + timeout_s
    moves: list[str] = []
    while time.monotonic() < deadline:
        if wait_for_turn(page) == "over":
            return moves
        moves.append(play_one_move(page))
    raise AssertionError(f"the game did not end in {timeout_s} s ({len(moves)} moves made)")
