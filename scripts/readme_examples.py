"""Run every ```python block of the README, each in a fresh interpreter, in the current folder.

    python scripts/readme_examples.py README.md

CI runs it from a folder outside the checkout with the installed wheel, so an example that
only works in a clone (a relative ``data/...`` path, a file that another command must write
first) fails here. Exit 1 naming the failing block's first line and its line in the README.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path


def blocks(markdown: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each fenced ```python block."""
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", markdown, flags=re.M | re.S):
        out.append((markdown.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    found = blocks(Path(argv[0]).read_text(encoding="utf-8"))
    if not found:
        print(f"readme_examples: no ```python block in {argv[0]}", file=sys.stderr)
        return 1
    failed = 0
    for line, code in found:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-"], input=code, text=True, capture_output=True, timeout=600)
        took = time.perf_counter() - t0
        first = code.strip().splitlines()[0]
        if proc.returncode != 0:
            failed += 1
            print(f"readme_examples: the block at README line {line} ({first!r}) failed after {took:.1f} s:\n"
                  f"{proc.stderr[-3000:]}", file=sys.stderr)
        else:
            print(f"readme_examples: README line {line}: ok ({took:.1f} s)", file=sys.stderr)
    print(f"readme_examples: {len(found) - failed} of {len(found)} blocks ran")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
