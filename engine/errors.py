"""The one exception a move can raise."""

from __future__ import annotations


class IllegalMove(Exception):
    """A move the rules do not allow. ``code`` is stable snake_case; ``message`` is for people.

    The reason codes are listed in docs/reason-codes.md.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}
