"""openapi.yaml: the repo-root copy is the packaged one, it is served, and it names the
engine's presets."""

from __future__ import annotations

from pathlib import Path

import yaml
from flask.testing import FlaskClient

import engine
from api.routes.meta import openapi_text

ROOT = Path(__file__).resolve().parents[2]


def test_root_copy_is_identical() -> None:
    assert (ROOT / "openapi.yaml").read_bytes() == (ROOT / "api" / "openapi.yaml").read_bytes(), (
        "openapi.yaml at the repo root must be a copy of api/openapi.yaml: cp api/openapi.yaml openapi.yaml"
    )


def test_served(client: FlaskClient) -> None:
    r = client.get("/openapi.yaml")
    assert r.status_code == 200 and r.mimetype == "application/yaml"
    assert r.data == openapi_text()
    assert yaml.safe_load(r.data)["openapi"] == "3.1.0"


def test_presets_match_the_engine() -> None:
    spec = yaml.safe_load(openapi_text())
    assert set(spec["components"]["schemas"]["PresetName"]["enum"]) == set(engine.PRESETS)


def test_every_route_is_documented(client: FlaskClient) -> None:
    spec = yaml.safe_load(openapi_text())
    app = client.application
    documented = {(path, method.upper()) for path, ops in spec["paths"].items() for method in ops if method != "parameters"}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = rule.rule.replace("<int:seat>", "{seat}").replace("<game_id>", "{game_id}").replace("<preset>", "{preset}")
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method) in documented, (path, method)
