"""Select among generator candidates on the selection seeds (issue 13: calibrate on 100-105, select on 200-205).

Each candidate (the top ``--top`` of a search history by expected evidence rows on the calibration
seeds, the history rows ``--also``, and the bundled set as the incumbent) runs the whole reproduction on seeds 200-205, groups
200-202 and 203-205, 16 DAGs, under the three broken simulators (so each candidate's rows get their
*own* kinds), and figure 11 on seeds 200-204. The rule, fixed before any run: a candidate must hold
every figure-11 row; among those, the largest mean over the two groups of evidence rows held wins,
then the mean of rows held. One CSV row per candidate is appended to ``--out``.

    python scripts/sim_select.py --history data/sim/search_history.csv --top 6 --also 46 167
    python scripts/sim_select.py --history data/sim/search_history_fig11.csv --fig11 --top 4

(the v4 runs; "bundled" is whatever ``data/sim/calibrated.json`` holds when the script runs: the v2 set then).
After each run the script prints the rule's choice over everything in ``--out`` (:func:`choose`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import pandas as pd

from evalkit.sim.experiments import load_params
from evalkit.studies.reproduce import reproduce

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (200, 201, 202, 203, 204, 205)
FIG11_SEEDS = (200, 201, 202, 203, 204)


def candidates(history: Path, top: int, also: list[int], *, fig11: bool = False) -> list[tuple[str, dict]]:
    """The incumbent (empty knobs), the ``top`` candidates of ``history`` by expected evidence
    (with ``fig11``: among those holding every figure-11 row on the calibration seeds) and the rows
    ``also`` (row numbers from 0)."""
    h = pd.read_csv(history).reset_index()
    pool = h.loc[h["fig11_held"] == h["fig11_rows"]] if fig11 else h
    h = pd.concat([pool.sort_values("expected_evidence", ascending=False).head(top), h.loc[also]])
    h = h.drop_duplicates("index")
    return [("bundled", {})] + [(f"#{i}", json.loads(k)) for i, k in zip(h["index"], h["knobs"], strict=True)]


def choose(selection: pd.DataFrame) -> pd.Series:
    """The rule: every figure-11 row held; then the most evidence rows held (mean over the two
    groups); then the most rows held. Returns the winning row of ``selection`` (this script's CSV)."""
    ok = selection.loc[selection["fig11 held"] == selection["fig11 rows"]]
    groups = [c.removeprefix("held ") for c in selection.columns if c.startswith("held ")]
    ev = ok[[f"evidence held {g}" for g in groups]].mean(axis=1)
    rows = ok[[f"held {g}" for g in groups]].mean(axis=1)
    return ok.loc[pd.DataFrame({"ev": ev, "rows": rows}).sort_values(["ev", "rows"]).index[-1]]


def run(name: str, knobs: dict, base) -> dict:
    params = dataclasses.replace(base, generator=base.generator.replace(**knobs))
    t0 = time.time()
    rep = reproduce(None, params=params, seeds=SEEDS, figures=False, fig11_seeds=FIG11_SEEDS)
    counts = rep.counts()
    f11 = rep.figure11
    row = {"candidate": name, "seconds": round(time.time() - t0, 1), "rows": len(rep.summary)}
    for g, c in counts.items():
        row[f"held {g}"] = c["held"]
        row[f"evidence held {g}"] = c["evidence_held"]
    row["evidence kinds"] = int((rep.summary["kind"] == "evidence").sum())
    row["fig11 held"] = int(f11["holds"].sum())
    row["fig11 rows"] = len(f11)
    row["fig11 evidence"] = int((f11["kind"] == "evidence").sum())
    row["knobs"] = json.dumps(knobs, sort_keys=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--history", default=str(ROOT / "data" / "sim" / "search_history.csv"))
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--fig11", action="store_true", help="top candidates among those holding figure 11 (a "
                    "history of sim_random_search.py --fig11)")
    ap.add_argument("--also", type=int, nargs="*", default=[], help="more history rows (from 0)")
    ap.add_argument("--out", default=str(ROOT / "data" / "sim" / "selection_v4.csv"))
    a = ap.parse_args()
    base = load_params()
    out = Path(a.out)
    for name, knobs in candidates(Path(a.history), a.top, a.also, fig11=a.fig11):
        if name == "bundled" and out.exists() and (pd.read_csv(out)["candidate"] == "bundled").any():
            continue  # the incumbent runs once
        row = run(name, knobs, base) | {"history": Path(a.history).name}
        pd.DataFrame([row]).to_csv(out, mode="a", header=not out.exists(), index=False)
        print({k: v for k, v in row.items() if k != "knobs"}, flush=True)
    best = choose(pd.read_csv(out))
    print(f"the rule's choice so far: {best['candidate']} of {best['history']}")


if __name__ == "__main__":
    main()
