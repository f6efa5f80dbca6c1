"""schemathesis 4 over openapi.yaml against the WSGI app: no 5xx, every response as specified.

The schema is loaded eagerly (``schemathesis.pytest.from_fixture`` does not work with
pytest 9), so this module makes its own app on its own key prefix and deletes it at exit.
"""

from __future__ import annotations

import atexit
import os
import random
import uuid
from typing import Any

import redis
import schemathesis
from api_helpers import Table
from hypothesis import strategies as st

import engine
from bots.simulate import play_game
from cli.engine_cmds import random_policy
from replay.log import encode_log
from service.keys import GAME_ID_RE
from tests.conftest_redis import delete_test_keys, redis_url_for_tests
from web import create_app

MAX_EXAMPLES = int(os.environ.get("CANASTA_ST_EXAMPLES", "40"))
PREFIX = f"test-st-{uuid.uuid4().hex[:10]}"

app = create_app({
    "redis_url": redis_url_for_tests(),
    "key_prefix": PREFIX,
    "test_seeds": True,
    "rate_limit_enabled": False,
    "sse_ping_seconds": 0.1,
    "sse_max_seconds": 0.3,
    "poll_max_wait": 0.3,
})
_client = app.test_client()
_playing = Table(_client, {"preset": "classic", "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}], "seed": 1})
_waiting = Table(_client, {"preset": "finnish-2p", "seats": [{"name": "a"}, None]})
GAME_IDS = [_playing.id, _waiting.id]
TOKENS = [*_playing.tokens.values(), *_waiting.tokens.values()]

# The schema cannot say that `seats` must have `players` entries, or that a preset is
# played by some player counts only: schema-valid bodies may rightly get 422, so the
# "positive data accepted" check is off. The hooks below put real tokens into generated
# requests, which "ignored auth" would take for generated (invalid) credentials: off too
# (test_api_http checks 401s). Every other check runs.
CONFIG = schemathesis.Config.from_dict({
    "generation": {"max-examples": MAX_EXAMPLES},
    "checks": {
        "positive_data_acceptance": {"enabled": False},
        "ignored_auth": {"enabled": False},
        "not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx"]},
    },
})
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", app, config=CONFIG)

# POST /replay takes a game log: a real one, the same cut short or with a line broken, or
# any bytes at all.
_record = play_game(engine.resolve("classic", None, {"target_score": 200}), random.Random(5),
                    random_policy(random.Random(5)))
_LOG = encode_log(_record.log_lines("g-schemathesis"))
schemathesis.openapi.media_type("application/x-ndjson", st.one_of(
    st.sampled_from([_LOG, _LOG[: len(_LOG) // 2], _LOG.replace(b'"draw"', b'"pass"', 1)]),
    st.binary(max_size=300),
))


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    """Some requests reach real games (ids that are invalid on purpose stay invalid)."""
    if not path_parameters or not GAME_ID_RE.match(str(path_parameters.get("game_id", ""))):
        return st.just(path_parameters)
    return st.sampled_from([path_parameters["game_id"], *GAME_IDS]).map(
        lambda gid: {**path_parameters, "game_id": gid})


@schema.hook
def flatmap_headers(context: Any, headers: dict[str, Any] | None) -> Any:
    """Some requests carry a real seat's token."""
    return st.sampled_from([None, *TOKENS]).map(
        lambda token: headers if token is None else {**(headers or {}), "Authorization": f"Bearer {token}"})


def _cleanup() -> None:
    """At exit, not in a fixture: the games above are made when the module is imported, also
    by a run that deselects its tests (``-m slow``). Registered after the embedded Valkey's
    stop, so it runs first."""
    try:
        delete_test_keys(app.extensions["canasta"].store.queue, PREFIX)
    except redis.RedisError:
        pass


atexit.register(_cleanup)


@schema.parametrize()
def test_api_conforms(case: schemathesis.Case) -> None:
    case.call_and_validate()
