"""Players' names on the web table: each is isolated from the text around it (a <bdi>), so a
name in Hebrew or Arabic next to a seat number, a card or a score does not carry them over to
its side; and a name the server refuses is refused on the start page with the server's reason."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_pages import Pages
from playwright.sync_api import Page, expect

from client import Client

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

HEBREW, ARABIC = "אבי", "سارة"  # Avi, Sara: right-to-left names
re_rtl = re.compile(f"{HEBREW}|{ARABIC}")

# Every text node holding one of ``names``: is it inside a <bdi> (or an element whose computed
# unicode-bidi isolates it)? The offenders, with where they are.
NOT_ISOLATED = """(names) => {
  const offenders = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!names.some((n) => node.data.includes(n))) continue;
    let el = node.parentElement, isolated = false;
    for (; el && el !== document.body; el = el.parentElement) {
      const bidi = getComputedStyle(el).unicodeBidi;
      if (el.tagName === 'BDI' || bidi === 'isolate' || bidi === 'isolate-override' || bidi === 'plaintext') {
        isolated = true;
        break;
      }
    }
    if (!isolated) offenders.push(`${node.parentElement.closest('[id]')?.id}: ${node.data}`);
  }
  return offenders;
}"""

# Where "150" is drawn relative to the name in "Final totals: <name> 150 · ann 120", as the
# table builds it (render.js resultBlock) and, for comparison, as plain text: the score's left
# edge minus the name's right edge (> 0: the score stands right of the name, as written).
SCORE_AFTER_NAME = """async ({ name }) => {
  const R = await import('/static/js/render.js');
  const seats = [{ seat: 0, team: 0, name }, { seat: 1, team: 1, name: 'ann' }];
  const view = { teams: [[0], [1]] };
  const block = R.resultBlock({ winner: 0, totals: [150, 120] }, view, seats);
  block.id = 'probe';
  document.body.append(block);
  const plain = document.createElement('p');
  plain.textContent = `Final totals: ${name} 150 · ann 120`;
  document.body.append(plain);
  const rect = (node, text) => {
    const range = document.createRange();
    const at = node.data.indexOf(text);
    range.setStart(node, at);
    range.setEnd(node, at + text.length);
    return range.getBoundingClientRect();
  };
  const line = block.querySelector('p');
  const bdi = line.querySelector('bdi');
  const after = bdi.nextSibling;  // " 150 · "
  const table = rect(after, '150').left - bdi.getBoundingClientRect().right;
  const text = plain.firstChild;
  const untouched = rect(text, '150').left - rect(text, name).right;
  block.remove();
  plain.remove();
  return { tag: bdi.tagName, name: bdi.textContent, table, untouched };
}"""


def _open_seat_zero(pages: Pages, api: Client) -> tuple[Page, dict[str, Any]]:
    created = api.create_game("classic", [{"name": "ann"}, {"name": HEBREW}, {"name": "bob"}, {"name": ARABIC}],
                              seed=11)
    token = created["seats"][0]["token"]
    page = pages.new(f"/#game={created['id']}&seat=0&token={token}")
    expect(page.locator("#table")).to_have_attribute("data-status", "playing")
    return page, created


def _two_turns(api: Client, created: dict[str, Any]) -> None:
    """Two seats in a row draw and discard (over the API): one of them is seat 1 or 3, whose
    names are right-to-left, so the event log names one."""
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    for _ in range(2):
        reply = api.game(created["id"], tokens[0])
        seat = reply.body["view"]["to_act"]
        api.move(created["id"], tokens[seat], {"type": "draw"}, str(reply.etag))
        view = api.game(created["id"], tokens[seat])
        card = view.body["view"]["legal"]["discards"][0]
        api.move(created["id"], tokens[seat], {"type": "discard", "card": card}, str(view.etag))


def test_every_name_on_the_table_is_isolated(pages: Pages, api: Client) -> None:
    page, created = _open_seat_zero(pages, api)
    expect(page.locator("#seats")).to_contain_text(f"{HEBREW} (seat 1)")
    _two_turns(api, created)
    expect(page.locator("#event-log li")).to_have_count(4)
    expect(page.locator("#event-log bdi").filter(has_text=re_rtl)).not_to_have_count(0)
    names = page.locator("#seats bdi")
    assert sorted(names.all_inner_texts()) == sorted(["ann", HEBREW, "bob", ARABIC])
    # the seats, the sides' titles, the event log, the status line: wherever a name shows
    assert page.locator("#sides bdi").all_inner_texts() == ["bob", HEBREW, ARABIC]  # "you & bob"
    assert page.evaluate(NOT_ISOLATED, [HEBREW, ARABIC]) == []
    pages.shot(page, "names-isolated")


@pytest.mark.parametrize("name", [HEBREW, ARABIC])
def test_a_right_to_left_name_keeps_the_score_after_it(pages: Pages, api: Client, name: str) -> None:
    """As plain text, the bidi algorithm draws "150" left of a right-to-left name (it joins
    the name's run); isolated, it stays right of it, as written."""
    page, _ = _open_seat_zero(pages, api)
    found = page.evaluate(SCORE_AFTER_NAME, {"name": name})
    assert found["tag"] == "BDI" and found["name"] == name
    assert found["untouched"] < 0, found  # the page shows the problem it solves
    assert found["table"] > 0, found


def test_the_start_page_shows_the_servers_reason_for_a_refused_name(pages: Pages) -> None:
    page = pages.new("/")
    page.fill("#my-name", "\u202eann")
    page.click("#create")
    error = page.locator("#create-error")
    expect(error).to_contain_text("invalid_name: bidi_control")
    expect(error).to_contain_text("U+202E")
    expect(page.locator("#seat-links")).to_have_count(0)  # no game was made
    pages.shot(page, "name-refused", full_page=False)
