"""One JSON file in, or a ValueError that names the file, the position and what was expected."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["read_json"]


def read_json(path: Path, expected: str) -> object:
    """Parse ``path``; on malformed JSON say where, and that ``expected`` (e.g. "an Inspect AI log") was wanted."""
    with open(path, encoding="utf-8") as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                             f"expected {expected}.") from None
