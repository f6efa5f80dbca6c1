"""The HTTP shell over the game service: the Flask app factory (``web:create_app()``), its
routes, the ASGI app granian serves (:mod:`web.asgi`), the event streams and the limits.
It decides nothing about games: it parses requests, calls :mod:`service` and writes the
answers (problem+json for refusals, :mod:`web.problems`)."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import redis
from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

import table
from service.config import Settings


def create_app(config: Settings | dict[str, Any] | None = None) -> Flask:
    """Build the WSGI app. ``config``: a :class:`Settings` or overrides of its fields."""
    from service import logs, metrics
    from service.store import NotDurable, Store, connect
    from web import middleware
    from web import problems as errors
    from web.http import Ctx
    from web.observe import Observer, Routes, WsgiObserved, access_log
    from web.problems import ApiError, not_durable_problem, problem_response
    from web.routes import events, games, meta, page, replays
    from web.stream_limits import StreamLimits

    settings = config if isinstance(config, Settings) else Settings.from_env(config)
    logs.setup()  # JSON lines on stderr (CANASTA_LOG_FORMAT), unless the host configured logging
    access_log.setLevel(logging.INFO if settings.access_log else logging.WARNING)
    app = Flask(__name__, static_folder=str(table.STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    # the moves and reads wait at most for the durability confirmation (and the socket 10 s
    # more): a node that went silent fails them that soon, and the retry finds the new
    # primary; the blocking reads of the WSGI streams have a client of their own, made at the first
    games_redis = connect(settings.redis_url, settings.durability_timeout_ms / 1000)
    blocking = partial(connect, settings.redis_url, max(settings.poll_max_wait, settings.sse_ping_seconds))
    queue_url = settings.bot_queue_url  # a cluster without CANASTA_QUEUE_URL stops here, with the reason
    store = Store.for_settings(games_redis, settings, None if queue_url == settings.redis_url else connect(queue_url),
                               blocking=blocking)
    limits = StreamLimits(settings.max_streams_per_token, settings.max_streams_per_address, games_redis,
                          settings.key_prefix)
    app.extensions["canasta"] = Ctx(settings, store, limits)
    errors.register(app)

    @app.errorhandler(redis.exceptions.ConnectionError)
    @app.errorhandler(redis.exceptions.TimeoutError)
    def _redis_down(exc: Exception) -> Any:
        metrics.count_redis_error("api")
        logging.getLogger("canasta.api").warning("redis unavailable: %s", exc)
        return problem_response(ApiError(503, "redis_unavailable", "The game store does not answer; retry.",
                                         headers={"Retry-After": "1"}))

    @app.errorhandler(NotDurable)
    def _not_durable(exc: NotDurable) -> Any:
        logging.getLogger("canasta.api").error("a change was not confirmed durable: %s", exc)
        return problem_response(not_durable_problem())

    from service.durability import warn_once

    warn_once(store.redis, settings)
    middleware.register(app)
    app.register_blueprint(meta.bp)
    app.register_blueprint(games.bp)
    app.register_blueprint(events.bp)
    app.register_blueprint(replays.bp)
    app.register_blueprint(page.bp)
    if settings.trust_proxy:
        # Flask's documented way to wrap its WSGI app; mypy refuses any assignment to a method.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1)  # type: ignore[method-assign]
    # outermost: every request gets its id, its metrics and its access line (web.observe)
    observer = Observer(settings, Routes.of(app))
    app.extensions["canasta.observer"] = observer
    app.wsgi_app = WsgiObserved(app.wsgi_app, observer)  # type: ignore[method-assign]
    return app


__all__ = ["Settings", "create_app"]
