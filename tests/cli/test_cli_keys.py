"""`canasta keys`: an operator issues, lists and revokes API keys; the key is printed once and
only its hash is stored."""

from __future__ import annotations

import re

import pytest

from cli.keys import main
from service.apikeys import ApiKeys
from service.redis_io import connect
from tests.conftest_redis import key_prefix, redis_url  # noqa: F401


def test_create_list_and_revoke_a_key(redis_url: str, key_prefix: str, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    prefix = key_prefix + ":keys"
    base = ["--redis-url", redis_url, "--prefix", prefix]
    assert main([*base, "create", "spring cup", "--games-per-hour", "500", "--bot-games", "0"]) == 0
    out = capsys.readouterr().out
    key_id = re.search(r"^id ([0-9a-f]{10})", out, re.MULTILINE).group(1)
    secret = re.search(r"X-Api-Key\): (ck_\S+)", out).group(1)
    found = ApiKeys(connect(redis_url), prefix).verify(secret)
    assert found is not None and found.id == key_id and (found.games_per_window, found.bot_games) == (500, 0)
    assert main([*base, "list"]) == 0
    listed = capsys.readouterr().out
    assert key_id in listed and "'spring cup'" in listed and "games of bots only no limit" in listed
    assert secret not in listed
    assert main([*base, "revoke", key_id]) == 0
    assert ApiKeys(connect(redis_url), prefix).verify(secret) is None
    assert main([*base, "revoke", key_id]) == 1
    assert "no key" in capsys.readouterr().err
    assert main([*base, "create", "bad", "--bot-runs", "-1"]) == 2
    assert "bot_runs must not be negative" in capsys.readouterr().err
