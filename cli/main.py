"""`canasta SUBCOMMAND ...`: one console command; each subcommand lives with its package.

Subcommands are imported lazily so that `canasta replay` does not pay for Flask and
`canasta serve` does not pay for the replay tool.
"""

from __future__ import annotations

import importlib
import sys

# name -> (module, function, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "rules": ("cli.engine_cmds", "rules_main", "list the presets, or print one preset's resolved options"),
    "simulate": ("cli.engine_cmds", "simulate_main", "play whole games with random legal actions"),
    "replay": ("cli.replay_export", "main", "validate, show and export game logs"),
    "play": ("cli.play", "main", "play a game in the terminal (starts a local server unless given --api)"),
    "serve": ("web.serve", "main", "run the API (granian), a bot worker and, without REDIS_URL, an embedded Valkey"),
    "worker": ("worker.cli", "main", "run an RQ worker that plays bot seats"),
    "keys": ("cli.keys", "main", "issue, list and revoke API keys (quotas for backends that create many games)"),
    "audit": ("audit.cli", "main", "test each seat's play for fair play: did it favour cards it could not see?"),
    "tournament": ("bots.tournament", "main", "play one bot against another and report win rates"),
    "bench": ("cli.bench", "main", "benchmarks: engine, replay, api, bots"),
}


def usage() -> str:
    lines = ["usage: canasta SUBCOMMAND [options]", "", "subcommands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, _, help_) in SUBCOMMANDS.items()]
    lines += ["", "`canasta SUBCOMMAND --help` tells more."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"canasta: unknown subcommand {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module, func, _ = SUBCOMMANDS[name]
    result = getattr(importlib.import_module(module), func)(rest)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
