"""Benchmark: ``read_comparisons`` against the bare pandas read a user would write by hand.

For Arena-style JSONL / JSON and left/right CSV files of N synthetic battles (100 models),
times evalkit's reader (parsing, format detection, label mapping, validation, report) and
the hand-written pandas equivalent without any checks (``pd.read_json``/``pd.read_csv`` +
``Series.map`` of the winner labels), and prints the medians and the time ratio.

Usage: ``python scripts/bench_io.py [--n 100000 1000000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.io import read_comparisons

WIN = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
LR = {"left": 1.0, "right": 0.0, "tie": 0.5}


def make(n: int, folder: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    models = np.array([f"model-{i}" for i in range(100)])
    a = rng.integers(0, 100, n)
    b = (a + rng.integers(1, 100, n)) % 100
    df = pd.DataFrame({
        "model_a": models[a], "model_b": models[b],
        "winner": rng.choice(np.array(list(WIN)), n),
        "question_id": rng.integers(0, 5000, n).astype(str),
    })
    paths = {"arena.jsonl": folder / "arena.jsonl", "arena.json": folder / "arena.json",
             "left_right.csv": folder / "lr.csv"}
    df.to_json(paths["arena.jsonl"], orient="records", lines=True)
    df.to_json(paths["arena.json"], orient="records")
    lr = df.rename(columns={"model_a": "left", "model_b": "right"})
    lr["winner"] = lr["winner"].map({"model_a": "left", "model_b": "right", "tie": "tie",
                                     "tie (bothbad)": "tie"})
    lr.to_csv(paths["left_right.csv"], index=False)
    return paths


def by_hand(kind: str, path: Path) -> pd.DataFrame:
    if kind == "left_right.csv":
        raw = pd.read_csv(path)
        return pd.DataFrame({"player_a": raw["left"], "player_b": raw["right"],
                             "outcome": raw["winner"].map(LR)})
    raw = pd.read_json(path, lines=kind.endswith("jsonl"))
    return pd.DataFrame({"player_a": raw["model_a"], "player_b": raw["model_b"],
                         "outcome": raw["winner"].map(WIN)})


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'file':>16} {'rows':>9} {'evalkit s':>10} {'pandas s':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            for kind, path in make(n, Path(tmp)).items():
                ours = median_time(lambda p=path: read_comparisons(p), args.repeat)
                theirs = median_time(lambda k=kind, p=path: by_hand(k, p), args.repeat)
                frame = read_comparisons(path).frame
                assert np.array_equal(frame["outcome"], by_hand(kind, path)["outcome"])
                print(f"{kind:>16} {n:>9} {ours:>10.3f} {theirs:>9.3f} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
