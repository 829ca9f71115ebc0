"""Per-row trade-offs of the adopted v4 set over every v4 candidate (writes ``data/sim/tradeoffs.csv``).

The random-search histories record each row's mean per candidate in ``mean:<claim>`` columns; this
joins ``search_history.csv`` and ``search_history_fig11.csv`` into the ``values`` form of
:func:`evalkit.sim.tradeoffs.row_tradeoffs` and compares every candidate with the chosen one on the
rows both histories record (the four rows added in v4 are missing from the first).

    python scripts/sim_v4_tradeoffs.py --chosen search_history_fig11.csv:20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from evalkit.sim.claims import CLAIMS
from evalkit.sim.tradeoffs import row_tradeoffs

ROOT = Path(__file__).resolve().parents[1]
HISTORIES = ("search_history.csv", "search_history_fig11.csv")


def values_history(folder: Path) -> pd.DataFrame:
    """One row per candidate of both histories: ``knob`` (the file), ``value`` (its row), ``values`` (JSON means)."""
    rows = []
    for name in HISTORIES:
        h = pd.read_csv(folder / name)
        means = h[[c for c in h.columns if c.startswith("mean:")]]
        for i, (_, m) in enumerate(means.iterrows()):
            rows.append({"knob": f"{name} row", "value": i,
                         "values": json.dumps({c[5:]: float(x) for c, x in m.items() if pd.notna(x)})})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chosen", default="search_history_fig11.csv:20", help="FILE:ROW of the chosen candidate")
    ap.add_argument("--out", default=str(ROOT / "data" / "sim" / "tradeoffs.csv"))
    a = ap.parse_args()
    name, row = a.chosen.split(":")
    h = values_history(ROOT / "data" / "sim")
    pos = h.index[(h["knob"] == f"{name} row") & (h["value"] == int(row))]
    if len(pos) != 1:
        raise ValueError(f"--chosen must name a file of {HISTORIES} and a row in it; got {a.chosen!r}.")
    measured = set.intersection(*(set(json.loads(v)) for v in h["values"]))
    t = row_tradeoffs(h, chosen=int(pos[0]), claims=[c for c in CLAIMS if c.id in measured])
    t.to_csv(a.out, index=False)
    print(f"{len(t)} rows missed by the chosen set over {len(h)} candidates -> {a.out}")


if __name__ == "__main__":
    main()
