"""The web table: one page at ``/``; its scripts and styles are the app's static files
(``table``, served at ``/static/...``). No build step: plain ES modules."""

from __future__ import annotations

import functools

from flask import Blueprint, Response

from table import STATIC as TABLE_FILES

bp = Blueprint("web", __name__)

# The page loads only its own files and talks only to this server. A seat's token lives in
# the URL's fragment, which browsers never send; no-referrer keeps the page's address to itself.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


@functools.cache
def page() -> bytes:
    return (TABLE_FILES / "index.html").read_bytes()


@bp.get("/")
def table() -> Response:
    return Response(page(), mimetype="text/html", headers=PAGE_HEADERS)
