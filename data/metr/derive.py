"""Derive the compact METR files in this folder from METR's runs file (MIT, METR/eval-analysis-public @ 19b0311).

    python data/metr/derive.py /work/shared/data/real/metr/all_runs_19b0311.jsonl.gz METR_CHECKOUT/data/external/release_dates.yaml

``runs.csv.gz``: one row per run, in the file's order, with the columns evalkit's time horizon
needs: ``agent`` (METR's ``alias``), ``task`` (``task_id``), ``family`` (``task_family``),
``minutes`` (``human_minutes``) and ``score`` (``score_binarized``). The order is kept so that
METR's bootstrap replicates (which index rows) are reproducible on this file. METR's weight
columns are not copied: evalkit computes them (they agree to 5e-11, the file's rounding).
``release_dates.csv``: METR's release dates of the agents in the runs, under the names the runs
use (``davinci-002`` is ``davinci-002 (GPT-3)`` in METR's dates, so, as in METR's own trend, it
has none).
"""

import gzip
import io
import sys

import pandas as pd
import yaml


def main(runs_path: str, dates_path: str) -> None:
    runs = pd.read_json(runs_path, lines=True, orient="records", convert_dates=False)
    out = runs.rename(columns={"alias": "agent", "task_id": "task", "task_family": "family",
                               "human_minutes": "minutes"})[["agent", "task", "family", "minutes"]]
    out["score"] = runs["score_binarized"].astype(int)
    buf = io.StringIO()
    out.to_csv(buf, index=False, lineterminator="\n")
    with open("data/metr/runs.csv.gz", "wb") as fh:
        fh.write(gzip.compress(buf.getvalue().encode(), compresslevel=9, mtime=0))
    dates = yaml.safe_load(open(dates_path).read())["date"]
    agents = sorted(set(out["agent"]))
    rows = [{"agent": a, "release_date": str(dates[a])} for a in agents if a in dates]
    pd.DataFrame(rows).sort_values("release_date").to_csv("data/metr/release_dates.csv", index=False,
                                                          lineterminator="\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
