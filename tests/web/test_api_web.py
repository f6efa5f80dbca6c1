"""The web table: its page and the files it loads (the browser tests drive it: tests/browser)."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

STATIC = Path(__file__).resolve().parents[2] / "table" / "static"

def test_the_page_is_served_with_a_strict_policy(client: FlaskClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.mimetype == "text/html"
    policy = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "default-src 'none'" in policy
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert b'<script type="module" src="/static/js/main.js">' in r.data


def test_the_page_opens_from_a_link_with_tracking_parameters(client: FlaskClient) -> None:
    """Chat apps add ?fbclid=... to shared links; the API's own endpoints still refuse
    unknown parameters."""
    assert client.get("/?fbclid=abc&utm_source=chat").status_code == 200
    assert client.get("/static/js/main.js?v=2").status_code == 200
    assert client.get("/rules?fbclid=abc").get_json()["code"] == "unknown_parameter"


def test_every_file_the_page_loads_is_served(client: FlaskClient) -> None:
    """The page's files and every module they import, as the browser would fetch them."""
    page = client.get("/").get_data(as_text=True)
    wanted = set(re.findall(r'(?:src|href)="(/static/[^"]+)"', page))
    seen: set[str] = set()
    while wanted - seen:
        path = sorted(wanted - seen)[0]
        seen.add(path)
        r = client.get(path)
        assert r.status_code == 200, path
        if path.endswith(".js"):
            assert r.mimetype in ("text/javascript", "application/javascript"), (path, r.mimetype)
            base = path.rsplit("/", 1)[0]
            for target in re.findall(r"""^\s*(?:import|export)\b[^;]*?from\s+'(\./[^']+)'""", r.get_data(as_text=True), re.M):
                wanted.add(f"{base}/{target[2:]}")
        r.close()
    on_disk = {f"/static/{p.relative_to(STATIC).as_posix()}" for p in STATIC.rglob("*") if p.is_file()}
    assert on_disk - {"/static/index.html"} == seen, "a file in table is never loaded, or one is missing"


def test_no_token_ever_goes_into_a_url() -> None:
    """Tokens travel in Authorization headers only: no script builds a URL with access_token."""
    for path in STATIC.rglob("*.js"):
        assert "access_token" not in path.read_text(), path
