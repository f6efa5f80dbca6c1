"""The web table: a page (``index.html``), its styles and its ES modules (``js/``), with no
build step. The HTTP shell serves them (``web.routes.web``); they talk to the server only
through the public API."""

from pathlib import Path

STATIC = Path(__file__).resolve().parent  # the folder served at /static/
