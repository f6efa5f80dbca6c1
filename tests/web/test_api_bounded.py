"""The guard on every problem (``web.problems.bounded``) and the check of a join's key
(``web.http.weak_key``): pure functions, tested as such."""

from __future__ import annotations

import secrets
import uuid

import orjson
import pytest

from engine.text import MORE, QUOTE_CHARS
from web.http import JOIN_KEY_MIN_CHARS, weak_key
from web.problems import MEMBERS_CHARS, SENTENCE_CHARS, ApiError, bounded, cut


def test_a_cut_keeps_the_limit_and_says_how_long_it_was() -> None:
    assert cut("short", 10) == "short"
    text = cut("x" * 900_000, QUOTE_CHARS)
    assert len(text) == QUOTE_CHARS and text.endswith(f"{MORE} (900000 characters)")


def test_no_member_of_a_problem_is_long_whatever_an_error_puts_in_it() -> None:
    huge = "x" * 900_000
    problem = ApiError(422, "invalid_request", huge, title=huge, reason=huge, seat=10**400,
                       errors={huge: [huge], "nested": {str(n): {"k" * 200 + str(n): ["m" * 200]} for n in range(5000)},
                               "deep": [[[[[[[[[[huge]]]]]]]]]]}).to_dict()
    blob = orjson.dumps(problem)  # every member is JSON (the 400-digit seat became text)
    assert len(blob) < 3 * SENTENCE_CHARS + MEMBERS_CHARS + 1000
    assert len(problem["detail"]) == len(problem["title"]) == SENTENCE_CHARS
    assert len(problem["reason"]) <= QUOTE_CHARS and len(problem["seat"]) <= QUOTE_CHARS
    keys = list(problem["errors"])
    assert all(len(k) <= QUOTE_CHARS for k in keys) and keys[0].endswith("(900000 characters)")
    assert problem["errors"]["nested"][MORE].endswith("more")  # the rest counted, not listed


def test_a_small_problem_is_left_as_it_is() -> None:
    problem = ApiError(409, "seat_taken", "Seat 1 is already taken.", seat=1, errors={"name": ["Unknown field."]})
    assert bounded(problem.to_dict()) == problem.to_dict() == {
        "type": "urn:canasta:problem:seat_taken", "title": "Conflict", "status": 409,
        "detail": "Seat 1 is already taken.", "code": "seat_taken", "seat": 1, "errors": {"name": ["Unknown field."]}}


@pytest.mark.parametrize("key", ["a" * 21, "aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ab" * 20, "1234567890" * 4,
                                 "0123456789abcdef" * 2, "abcdefaaaaaaaaaaaaaaaaaa", "abababababababababababac"])
def test_a_guessable_join_key_is_weak(key: str) -> None:
    assert weak_key(key) is not None


def test_random_keys_are_not_weak() -> None:
    """What clients make: UUIDs (with and without dashes: the Python client, the web table's
    32 hex digits) and 16 random bytes in base64url, many of each."""
    for _ in range(2_000):
        for key in (uuid.uuid4().hex, str(uuid.uuid4()), secrets.token_urlsafe(16), secrets.token_hex(16)):
            assert len(key) >= JOIN_KEY_MIN_CHARS and weak_key(key) is None, key
