"""Reference numbers from evalkit as it was at main 5ca7eb2 (before counts-only statistics).

Regenerate (runs the OLD code, exported from git, on the repo's real data):

    rm -rf /tmp/evalkit-5ca7eb2 && mkdir /tmp/evalkit-5ca7eb2 && \
    git archive 5ca7eb2 evalkit | tar -x -C /tmp/evalkit-5ca7eb2 && \
    PYTHONPATH=/tmp/evalkit-5ca7eb2 python tests/data/scale/make_reference.py

It writes ``tests/data/scale/reference_5ca7eb2.json``: for every dataset, tie mode and interval
kind, the leaderboard (elo, ci_low, ci_high, n, wins, losses, ties, win_rate), plus summarize()
and, for AlpacaEval, alpaca_eval_summary(). ``tests/test_scale_equivalence.py`` checks today's
code against it through both engines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import evalkit
from evalkit.io import read_comparisons
from evalkit.ratings import leaderboard
from evalkit.summary import alpaca_eval_summary, summarize

ROOT = Path(__file__).resolve().parents[3]
DATASETS = {
    "ae1": "data/alpaca_eval/alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz",
    "ae2": "data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo__vs_gpt4_1106_preview__preferences.csv.gz",
    "ae1_raw": "tests/data/alpaca_eval/alpaca-7b__alpaca_eval_gpt4__annotations.json.gz",
    "ae2_raw": "tests/data/alpaca_eval/alpaca-7b__weighted_alpaca_eval_gpt4_turbo__annotations.json.gz",
    "llmfao_crowd": "tests/data/llmfao/crowd-comparisons.csv",
    "llmfao_gpt3": "tests/data/llmfao/gpt3-comparisons.csv",
    "llmfao_gpt4": "tests/data/llmfao/gpt4-comparisons.csv",
    "evalica_food": "tests/data/evalica/food.csv",
    "evalica_simple": "tests/data/evalica/simple.csv",
    "gold_five": "tests/data/gold/bt-five-players.json",
}
CASES = [  # (ties, interval, cluster, anchor)
    ("half", "sandwich", None, None),
    ("half", "hessian", None, None),
    ("drop", "sandwich", None, None),
    ("half", "sandwich", "item", None),
    ("half", "sandwich", None, "first"),
    ("davidson", "sandwich", None, None),
]
COLUMNS = ["model", "elo", "ci_low", "ci_high", "n", "wins", "losses", "ties", "win_rate"]


def gold_frame(path: Path) -> pd.DataFrame:
    """The gold counts as one row per comparison (wins of i, wins of j, ties)."""
    spec = json.loads(path.read_text())
    rows = []
    for i, j, wi, wj, t in spec["counts"]:
        a, b = spec["players"][i], spec["players"][j]
        rows += [(a, b, 1.0)] * wi + [(a, b, 0.0)] * wj + [(a, b, 0.5)] * t
    return pd.DataFrame(rows, columns=["player_a", "player_b", "outcome"])


def load(name: str) -> pd.DataFrame:
    path = ROOT / DATASETS[name]
    return gold_frame(path) if name == "gold_five" else read_comparisons(path).frame


def main() -> None:
    out = {"evalkit": evalkit.__file__, "datasets": DATASETS, "cases": {}}
    for name in DATASETS:
        frame = load(name)
        out["cases"][f"{name}/summarize"] = summarize(frame).to_dict(orient="list")
        if name.startswith("ae"):
            out["cases"][f"{name}/alpaca_eval_summary"] = (
                alpaca_eval_summary(frame).reset_index().to_dict(orient="list"))
        for ties, interval, cluster, anchor in CASES:
            if cluster and cluster not in frame.columns:
                continue
            key = f"{name}/{ties}/{interval}/{cluster}/{anchor}"
            anchor_name = sorted(set(frame["player_a"]) | set(frame["player_b"]))[0] if anchor else None
            try:
                table = leaderboard(frame, ties=ties, interval=interval, cluster=cluster,
                                    anchor=anchor_name)
            except ValueError as exc:
                out["cases"][key] = {"error": str(exc)[:200]}
                continue
            rec = table[COLUMNS].to_dict(orient="list")
            rec["anchor"] = anchor_name
            out["cases"][key] = rec
    dest = Path(__file__).with_name("reference_5ca7eb2.json")
    dest.write_text(json.dumps(out, indent=0, default=lambda x: x.item() if isinstance(x, np.generic) else str(x)))
    print(f"wrote {dest} ({len(out['cases'])} cases) with {evalkit.__file__}", file=sys.stderr)


if __name__ == "__main__":
    main()
