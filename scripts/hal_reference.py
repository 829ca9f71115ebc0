"""Run HAL's frontier rule on point sets and save its answers, for evalkit's tests.

HAL's frontend (fsndzomga/hal-frontend @ e15c50eb94bcc747b52dd2c919de39bb7a40db23, ``utils/pareto.py``)
is not copied into evalkit; this script imports it from a checkout (it needs numpy and matplotlib,
which it imports at the top):

    git --git-dir <mirror of fsndzomga/hal-frontend> show HEAD:utils/pareto.py > /tmp/metrics-hal/pareto.py
    python scripts/hal_reference.py --pareto /tmp/metrics-hal/pareto.py --out tests/data/hal/pareto_reference.json

The point sets (seeded, drawn here): random clouds of 2-30 points, clouds with repeated costs or
accuracies (ties), exact duplicates, collinear points, and a few hand-made ones. For each, HAL's
``compute_pareto_frontier`` returns agents; a point is on the frontier when its coordinates are
among them (as HAL's own loader marks ``is_pareto_efficient``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random


def point_sets(seed: int = 2025) -> list[list[tuple[float, float]]]:
    rng = random.Random(seed)
    sets: list[list[tuple[float, float]]] = [
        [(1.0, 0.5)],
        [(1.0, 0.5), (2.0, 0.4)],
        [(1.0, 0.2), (2.0, 0.5), (3.0, 0.6), (4.0, 0.9)],  # a dent: (3, 0.6) lies under the hull
        [(1.0, 0.2), (2.0, 0.4), (3.0, 0.6)],  # collinear
        [(1.0, 0.2), (1.0, 0.5), (2.0, 0.5), (3.0, 0.7)],  # tied cost, tied accuracy
        [(1.0, 0.3), (1.0, 0.3), (2.0, 0.6), (2.0, 0.6)],  # duplicates
        [(0.5, 0.1), (10.0, 0.9), (100.0, 0.92), (5.0, 0.85), (50.0, 0.2)],
    ]
    for n in range(2, 31):
        for _ in range(4):
            sets.append([(round(rng.lognormvariate(0, 1.5), 3), round(rng.random(), 3)) for _ in range(n)])
    for n in (5, 10, 20):
        for _ in range(6):  # coarse grids: many ties and duplicates
            sets.append([(float(rng.randint(1, 6)), rng.randint(0, 5) / 5) for _ in range(n)])
    return sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pareto", required=True, help="HAL's utils/pareto.py")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("hal_pareto", args.pareto)
    assert spec is not None and spec.loader is not None
    hal = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hal)
    cases = []
    for pts in point_sets():
        front = hal.compute_pareto_frontier([hal.Agent(total_cost=c, accuracy=a) for c, a in pts])
        on = {(f.total_cost, f.accuracy) for f in front}
        cases.append({"cost": [p[0] for p in pts], "accuracy": [p[1] for p in pts],
                      "on_frontier": [p in on for p in pts]})
    with open(args.out, "w") as fh:
        json.dump({"source": "fsndzomga/hal-frontend@e15c50eb94bcc747b52dd2c919de39bb7a40db23 utils/pareto.py",
                   "cases": cases}, fh)
        fh.write("\n")
    print(f"wrote {args.out}: {len(cases)} point sets")


if __name__ == "__main__":
    main()
