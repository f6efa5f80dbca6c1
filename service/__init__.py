"""The game service: games, seats and moves over Redis, with no HTTP.

Every change of a game is one compare-and-set (:mod:`service.store`, its Lua scripts beside
it) that writes the state, the event, the log lines and the idempotency record together, and
is durable when it returns (:mod:`service.durability`). :mod:`service.games` decides the
changes: creating a game, taking a seat, handing a seat to a bot and back, a move; the HTTP
shell (``web``) and the bot worker (``worker``) call these functions, and only these, to
change a game. Around them: seat tokens (:mod:`service.tokens`), the bot queue
(:mod:`service.botqueue`), quotas and API keys (:mod:`service.quotas`,
:mod:`service.apikeys`), the books of open and finished games (:mod:`service.retention`),
the settings (:mod:`service.config`) and what operators watch (:mod:`service.metrics`,
:mod:`service.logs`).
"""

from service.games import (
    CACHE,
    DEFAULT_TURN_TIMEOUT,
    Game,
    GameCache,
    MoveRequest,
    MoveResult,
    apply_move,
    assign_bot,
    authenticate,
    cached_game,
    commit_args,
    commit_steps,
    create_game,
    event_envelope,
    game_from_record,
    game_view,
    hint,
    join_seat,
    judge_move,
    load_game,
    loaded,
    move_fingerprint,
    move_result,
    move_steps,
    must_settle,
    not_durable,
    parse_state,
    prepare_move,
    read_log,
    remember,
    render_event,
    settle,
    take_seat_back,
    withheld_reason,
)

__all__ = [
    "CACHE", "DEFAULT_TURN_TIMEOUT", "Game", "GameCache", "MoveRequest", "MoveResult", "apply_move",
    "assign_bot", "authenticate", "cached_game", "commit_args", "commit_steps", "create_game", "event_envelope",
    "game_from_record", "game_view", "hint", "join_seat", "judge_move", "load_game", "loaded",
    "move_fingerprint", "move_result", "move_steps", "must_settle", "not_durable", "parse_state",
    "prepare_move", "read_log", "remember", "render_event", "settle", "take_seat_back",
    "withheld_reason",
]
