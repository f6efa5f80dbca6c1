"""openapi.yaml: one file, at the repository root, shipped in the package (api/openapi.yaml
is a link to it, which a wheel packages as the file), served, and naming the engine's presets."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from flask.testing import FlaskClient

import bots
import engine
from api.routes.meta import openapi_text

ROOT = Path(__file__).resolve().parents[2]


def test_one_file_at_the_root() -> None:
    packaged = ROOT / "api" / "openapi.yaml"
    assert packaged.is_symlink() and packaged.resolve() == (ROOT / "openapi.yaml").resolve()
    assert openapi_text() == (ROOT / "openapi.yaml").read_bytes()  # what the installed package reads


@pytest.mark.slow
def test_a_wheel_ships_the_file(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("canasta-*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("api/openapi.yaml") == (ROOT / "openapi.yaml").read_bytes()


def test_served(client: FlaskClient) -> None:
    r = client.get("/openapi.yaml")
    assert r.status_code == 200 and r.mimetype == "application/yaml"
    assert r.data == openapi_text()
    assert yaml.safe_load(r.data)["openapi"] == "3.1.0"


def test_presets_match_the_engine() -> None:
    spec = yaml.safe_load(openapi_text())
    assert set(spec["components"]["schemas"]["PresetName"]["enum"]) == set(engine.PRESETS)


def test_bots_match_the_bots_package() -> None:
    spec = yaml.safe_load(openapi_text())
    assert spec["components"]["schemas"]["BotName"]["enum"] == list(bots.NAMES)


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
