"""The web table: a page (``static/index.html``), its styles and its ES modules
(``static/js/``), with no build step. The HTTP shell serves them (``web.routes.page``); they
talk to the server only through the public API."""

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"  # the folder served at /static/
