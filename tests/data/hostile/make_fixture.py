"""Generate the hostile-names fixture (run from the repository root; output is committed).

Twelve model names an attacker or an unlucky user could put in a log: HTML with an onerror
handler, a javascript: link, Markdown, a newline, spreadsheet formulas, a right-to-left
override, CJK, a table pipe and matplotlib mathtext. Every pair meets four times (each side
wins once, one tie, one game to the better-ranked), so Bradley-Terry ratings exist.
``events.jsonl`` holds agent runs of five of the names (8 tasks x 3 runs, pass/fail) for
``evalkit compare``.
"""

import csv
import json
from itertools import combinations
from pathlib import Path

NAMES = [
    '<img src=x onerror="window.__evalkit_pwned=1">',
    "[click](javascript:window.__evalkit_pwned=2)",
    "**bold** _it_ # not a heading",
    "two\nlines",
    '=HYPERLINK("http://evil.example","x")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)",
    "abc\u202efdp.exe",
    "模型甲 (CJK)",
    "| pipe | cell",
    r"$x^2$ \frac",
]

if __name__ == "__main__":
    here = Path(__file__).parent
    with open(here / "comparisons.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["left", "right", "winner"])
        for i, j in combinations(range(len(NAMES)), 2):
            a, b = NAMES[i], NAMES[j]
            for winner in ("left", "right", "tie", "left" if (i + j) % 3 else "right"):
                w.writerow([a, b, winner])
    with open(here / "events.jsonl", "w", encoding="utf-8") as fh:
        for k, name in enumerate([NAMES[0], NAMES[1], NAMES[3], NAMES[4], NAMES[8]]):
            for task in range(8):
                for run in range(3):
                    passed = (task * 5 + run * 3 + k) % 4 != 0
                    fh.write(json.dumps({"agent": name, "task": f"t{task}", "run": f"{k}-{run}", "input_tokens": 100,
                                         "reward": float(passed)}, ensure_ascii=False) + "\n")
    with open(here / "scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "item", "score"])
        for k, name in enumerate(NAMES[:6]):
            for item in range(10):
                w.writerow([name, f"q{item}", round(((item * 7 + k * 3) % 10) / 10 + 0.05 * k, 3)])
