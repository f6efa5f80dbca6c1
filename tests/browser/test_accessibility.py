"""axe-core (axe-playwright-python) over the web table's pages: the start page, a game in
progress at the seat's turn, the end of a game with its last hand's scores, and a replay. No
violation of impact "serious" or "critical" is allowed; the others are reported."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_pages import Pages
from browser_player import wait_for_turn
from playwright.sync_api import Page, expect

from client import Client
from tests.browser.test_table import _game_with_a_meld_to_make, _table, _wait_status

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

BLOCKING = ("serious", "critical")


def _violations(page: Page) -> list[dict[str, Any]]:
    results = Axe().run(page)
    return [v for v in results.response["violations"] if v.get("impact") in BLOCKING]


def _check(page: Page, where: str) -> None:
    found = _violations(page)
    assert not found, f"{where}: " + "; ".join(
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}" for v in found)


def test_no_serious_violations_on_any_page(pages: Pages, api: Client) -> None:
    page = pages.new("/")
    expect(page.locator("#seat-specs select")).to_have_count(3)
    _check(page, "the start page")

    game_id, seat, token = _game_with_a_meld_to_make(api)
    page.goto(f"/#game={game_id}&seat={seat}&token={token}")
    assert wait_for_turn(page) == "turn"
    page.locator("#hand button.card").first.click()
    page.keyboard.press("a")  # a move not allowed: its reason shows
    _check(page, "a game in progress")

    game = api.create_game("finnish", [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}],
                           rules={"target_score": 1})
    _wait_status(api, game["id"], "over")
    page.goto(f"/#game={game['id']}")
    expect(page.locator(".banner table.scores")).to_be_visible()
    expect(_table(page)).to_have_attribute("data-status", "over")
    _check(page, "the end of a hand and of the game")

    page.click("#replay-link")
    expect(page.locator("#replay-view")).to_be_visible()
    _check(page, "a replay")
