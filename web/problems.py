"""Problem details (RFC 9457) for every error the API returns.

The game service's refusals (:mod:`service.errors`) become problems through one table,
:data:`PROBLEMS`; the HTTP layer's own errors (a malformed request, a missing header, a
limit) are raised as :class:`ApiError` directly.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any, NamedTuple

import orjson
from flask import Flask, Response
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from engine.text import MORE, QUOTE_CHARS
from service.errors import (
    Conflict,
    IllegalMove,
    InvalidToken,
    MissingToken,
    NotAllowed,
    NotAuthenticated,
    NotFound,
    ServiceError,
    StaleVersion,
    TooMany,
    Unavailable,
    Unprocessable,
)

PROBLEM_JSON = "application/problem+json"
NO_STORE = "no-store"
# How much of a request a problem may hold, whatever the error (``bounded``): a sentence
# (``detail``, ``title``) at most SENTENCE_CHARS characters, any other string member and every
# key of ``errors`` at most QUOTE_CHARS (a bad value, a field's name), and at most
# MEMBERS_CHARS characters of members besides the sentences. A cut ends with MORE and the
# original length. The sources cut first (engine.text.quote): this guard is for what they miss.
SENTENCE_CHARS = 400
MEMBERS_CHARS = 2000
SENTENCES = ("title", "detail")
MAX_DEPTH = 8  # nesting of members (marshmallow's errors of an action's melds: 5)
SCALAR_CHARS = 8  # what a number, a bool or null counts against MEMBERS_CHARS
JSON_INT = 2**53  # past this a number is written as text (and cut)
log = logging.getLogger("canasta.api")

# werkzeug's own exceptions -> our stable codes
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    411: "length_required",
    412: "precondition_failed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    428: "precondition_required",
    429: "rate_limited",
    500: "internal_error",
    501: "not_implemented",
    503: "unavailable",
}


class ApiError(Exception):
    """An error the API answers with: status, stable code, a sentence, extra members."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or HTTPStatus(status).phrase
        self.headers = headers or {}
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        body = {
            "type": f"urn:canasta:problem:{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        body.update(self.extra)
        return bounded(body)


class Problem(NamedTuple):
    """How a refusal of the service is answered: its status, a title other than the
    status's phrase, and the challenge of a 401 (``WWW-Authenticate``, RFC 6750 3)."""

    status: int
    title: str | None = None
    challenge: str | None = None


# The service's refusals as HTTP answers: the first class of an error's MRO that is here.
# The problem's type is ``urn:canasta:problem:<code>`` (the error's stable code).
PROBLEMS: dict[type[ServiceError], Problem] = {
    MissingToken: Problem(401, challenge="Bearer"),
    InvalidToken: Problem(401, challenge='Bearer error="invalid_token"'),
    NotAuthenticated: Problem(401),
    NotAllowed: Problem(403),
    NotFound: Problem(404),
    Conflict: Problem(409),
    StaleVersion: Problem(412),
    IllegalMove: Problem(422, title="Illegal move"),
    Unprocessable: Problem(422),
    TooMany: Problem(429),
    Unavailable: Problem(503),
}
UNMAPPED = Problem(500)  # a refusal of a kind the table lacks: a bug of ours


def service_problem(err: ServiceError) -> ApiError:
    """The answer to a refusal of the service (:data:`PROBLEMS`)."""
    problem = next((PROBLEMS[kind] for kind in type(err).__mro__ if kind in PROBLEMS), UNMAPPED)
    headers = {"WWW-Authenticate": problem.challenge} if problem.challenge else {}
    if "retry_after" in err.facts:  # a quota's window, the store's memory: when to come back
        headers["Retry-After"] = str(max(1, int(err.facts["retry_after"])))
    return ApiError(problem.status, err.code, err.detail, title=problem.title, headers=headers, **err.facts)


def not_durable_problem() -> ApiError:
    """The answer to a change the store did not confirm on its disk (:class:`service.store.NotDurable`)."""
    return ApiError(503, "not_durable", "The game store did not confirm the change on its disk: it may or may not "
                    "have been applied. Retry with the same Idempotency-Key.", headers={"Retry-After": "1"})


def problem_headers(err: ApiError) -> list[tuple[str, str]]:
    """A problem's headers (Flask's and the event loop's answers alike): never stored by a
    cache (a problem answers one request, and may be a seat's)."""
    return [("Content-Type", PROBLEM_JSON), ("Cache-Control", NO_STORE), *err.headers.items()]


def problem_response(err: ApiError) -> Response:
    resp = Response(orjson.dumps(err.to_dict()), status=err.status)
    for name, value in problem_headers(err):
        resp.headers[name] = value
    return resp


def _from_http(exc: HTTPException) -> ApiError:
    status = exc.code or 500
    code = _HTTP_CODES.get(status, "http_error")
    detail = exc.description or HTTPStatus(status).phrase
    headers = {}
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        headers["Allow"] = ", ".join(exc.valid_methods)
    return ApiError(status, code, detail, headers=headers)


def register(app: Flask) -> None:
    """Every error becomes problem+json; unexpected exceptions become a logged 500."""

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError) -> Response:
        return problem_response(err)

    @app.errorhandler(ServiceError)
    def _refused(err: ServiceError) -> Response:
        return problem_response(service_problem(err))

    @app.errorhandler(ValidationError)
    def _validation(err: ValidationError) -> Response:
        return problem_response(
            ApiError(422, "invalid_request", "The request body does not match the schema.",
                     errors=_jsonable(err.messages))
        )

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        return problem_response(_from_http(exc))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        if isinstance(exc, HTTPException):  # pragma: no cover - handled above
            return problem_response(_from_http(exc))
        log.exception("unhandled error")
        return problem_response(ApiError(500, "internal_error", "The server failed; the error was logged."))


def _jsonable(value: Any) -> Any:
    """marshmallow messages may be keyed by ints (list indexes): make them JSON keys."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def cut(text: str, limit: int) -> str:
    """``text``, or its start and a mark with its length: at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    mark = f"{MORE} ({len(text)} characters)"
    return text[:max(0, limit - len(mark))] + mark


class _Budget:
    """Characters the members of one problem may still take (:data:`MEMBERS_CHARS`)."""

    def __init__(self, chars: int) -> None:
        self.left = chars

    def take(self, text: str) -> str:
        text = cut(text, QUOTE_CHARS)
        self.left -= len(text)
        return text

    def spent(self) -> bool:
        return self.left <= 0


def bounded(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` (a problem) with no member longer than this module's limits: whatever an
    error puts in it (a field's name of a megabyte, ten thousand unknown fields), the answer
    stays a few KB."""
    budget = _Budget(MEMBERS_CHARS)
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key in SENTENCES and isinstance(value, str):
            out[key] = cut(value, SENTENCE_CHARS)
        else:
            out[budget.take(str(key))] = _bounded(value, budget, 0)
    return out


def _bounded(value: Any, budget: _Budget, depth: int) -> Any:
    if isinstance(value, str):
        return budget.take(value)
    if isinstance(value, dict | list | tuple) and depth >= MAX_DEPTH:
        return budget.take(MORE)
    if isinstance(value, dict):
        members: dict[str, Any] = {}
        for n, (key, item) in enumerate(value.items()):
            if budget.spent():
                members[MORE] = f"{len(value) - n} more"
                break
            members[budget.take(str(key))] = _bounded(item, budget, depth + 1)
        return members
    if isinstance(value, list | tuple):
        items: list[Any] = []
        for n, item in enumerate(value):
            if budget.spent():
                items.append(f"{MORE} {len(value) - n} more")
                break
            items.append(_bounded(item, budget, depth + 1))
        return items
    if isinstance(value, int) and not isinstance(value, bool) and not -JSON_INT <= value <= JSON_INT:
        return budget.take(str(value))  # no JSON number: a count or a seat of a request gone wrong
    budget.left -= SCALAR_CHARS
    return value
