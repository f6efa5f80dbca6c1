"""openapi.yaml: one file, at the repository root, shipped in the package (web/openapi.yaml
is a link to it, which a wheel packages as the file), served, naming the engine's presets, and
describing the views and events of every preset."""

from __future__ import annotations

import random
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml
from flask.testing import FlaskClient

import bots
import engine
from web.routes.meta import openapi_text

ROOT = Path(__file__).resolve().parents[2]


def test_one_file_at_the_root() -> None:
    packaged = ROOT / "web" / "openapi.yaml"
    assert packaged.is_symlink() and packaged.resolve() == (ROOT / "openapi.yaml").resolve()
    assert openapi_text() == (ROOT / "openapi.yaml").read_bytes()  # what the installed package reads


@pytest.mark.slow
def test_a_wheel_ships_the_file(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("canasta-*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("web/openapi.yaml") == (ROOT / "openapi.yaml").read_bytes()


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


PILE_REASONS = {"frozen_by_card", "wild_beside_pile", "locked_by_red_three"}
VIEW_EVERY = 5  # moves between the views checked
WALK_MOVES = 1500  # moves of each walk (random play may not end a game)


def _walk(rules: engine.RuleOptions, bot: str, seed: int) -> Iterator[tuple[engine.State, list[dict[str, Any]]]]:
    """Every :data:`VIEW_EVERY`th state of a game played by ``bot`` for every seat, and its
    end, each with the events of the moves since the last one (for every reader)."""
    rng = random.Random(seed)
    play = bots.policy(bot, random.Random(seed))
    state = engine.new_game(rules)
    events: list[dict[str, Any]] = []
    for n in range(WALK_MOVES):
        if state.phase == "deal":
            deck, salt, _ = engine.shuffle(rules, rng)
            state = engine.deal(state, deck, salt)
        seat = state.to_act
        action = play(state, seat, engine.legal_actions(state, seat))
        before, state = state, engine.apply(state, seat, action)
        events += [engine.describe_move(before, state, seat, action, viewer) for viewer in (None, *range(rules.players))]
        if state.phase == "over" or n % VIEW_EVERY == 0:
            yield state, events
            events = []
        if state.phase == "over":
            return


def test_the_views_and_events_of_every_preset_match_the_schema() -> None:
    """Seat and spectator views, and every move's event for every reader, along games of
    every preset and player count played by greedy and at random (the schemathesis run reads
    one classic game) are as the schema says; every kind of pile reason and every part that
    is not always there is met on the way."""
    spec = yaml.safe_load(openapi_text())
    validator = jsonschema_rs.validator_for({"$ref": "#/components/schemas/SeatView",
                                             "components": spec["components"]})
    move_validator = jsonschema_rs.validator_for({"$ref": "#/components/schemas/MoveEvent",
                                                  "components": spec["components"]})
    reasons: set[str] = set()
    met: set[str] = set()  # the parts that are not always null or empty, each seen filled
    ends: set[str] = set()  # why the hands and the games ended
    checked = 0
    for name, preset in engine.PRESETS.items():
        for players in sorted(preset.by_players):
            # games at a short target, and games cut by the limits (docs/rules.md, "Limits")
            for bot, house in (("greedy", {}), ("random", {}), ("random", {"max_hands": 1, "target_score": 50000}),
                               ("random", {"max_moves_per_hand": 25})):
                rules = engine.resolve(name, players, {"target_score": 1500, **house})
                for state, events in _walk(rules, bot, players):
                    for event in events:
                        move_validator.validate(event)
                        met.update(part for part in ("hand_end", "game_end", "pile_taken", "cards", "red_threes_laid",
                                                     "first_turn_red_threes", "beside_pile") if part in event)
                        ends.update(f"{part}:{event[part]['reason']}" for part in ("hand_end", "game_end")
                                    if part in event)
                    views = [engine.spectator_view(state)] + [engine.seat_view(state, p) for p in range(players)]
                    for view in views:
                        validator.validate(view)
                        reasons.update(r["reason"] for r in view["pile"]["reasons"])
                        met.update(part for part in ("last_hand", "result", "permission") if view[part] is not None)
                        legal = view.get("legal") or {}
                        met.update(part for part in ("go_out", "take_pile", "melds") if legal.get(part))
                        checked += 1
    assert reasons == PILE_REASONS, reasons
    assert met == {"last_hand", "result", "permission", "go_out", "take_pile", "melds", "hand_end", "game_end",
                   "pile_taken", "cards", "red_threes_laid", "first_turn_red_threes", "beside_pile"}, met
    assert checked > 1000, checked
    assert {"hand_end:move_limit", "game_end:target", "game_end:hand_limit", "game_end:move_limit"} <= ends, ends


def test_the_rule_options_ranges_are_the_engines() -> None:
    """The bounds that openapi.yaml gives for the options it names are engine.rules.BOUNDS."""
    from engine.rules import BOUNDS

    options = yaml.safe_load(openapi_text())["components"]["schemas"]["RuleOptions"]["properties"]
    ranged = {name: (schema["minimum"], schema["maximum"]) for name, schema in options.items() if "maximum" in schema}
    assert set(ranged) == {"target_score", "max_hands", "max_moves_per_hand"}
    assert ranged == {name: BOUNDS[name] for name in ranged}
