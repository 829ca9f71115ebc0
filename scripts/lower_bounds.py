"""Print pip constraints that pin every runtime dependency of pyproject.toml to its declared lower bound.

CI installs the package on the lowest supported Python with these constraints and runs the test
suite, so that a ``>=`` in ``[project].dependencies`` is a claim that was tested, not a guess:

    python scripts/lower_bounds.py --extra dask > lower.txt && pip install -c lower.txt -e ".[dev]"

``--extra NAME`` pins that optional extra's dependencies to their lower bounds too (CI pins the
``dask`` extra: the newest Dask needs a newer pyarrow than evalkit's lower bound, so without the
pin pip would backtrack through every Dask release). A dependency without a ``>=`` bound is an
error (it would not be tested at its lowest version).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
_SPEC = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(;.*)?$")


def lower_bounds(pyproject: Path = ROOT / "pyproject.toml", extras: tuple[str, ...] = ()) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    deps = list(project["dependencies"])
    for extra in extras:
        deps += project["optional-dependencies"][extra]
    out = []
    for dep in deps:
        m = _SPEC.match(dep.split("#")[0])
        if m is None:
            raise SystemExit(f"lower_bounds: {dep!r} has no '>=' lower bound to test")
        name, _, version, marker = m.groups()
        out.append(f"{name}=={version}" + (f" {marker}" if marker else ""))
    return list(dict.fromkeys(out))


if __name__ == "__main__":
    args = sys.argv[1:]
    extras = tuple(args[i + 1] for i, a in enumerate(args) if a == "--extra")
    sys.stdout.write("\n".join(lower_bounds(extras=extras)) + "\n")
