"""The report's default leaderboard interval against CR1 with t(G - 1), on LLMFAO gpt4 (issue 22).

``evalkit report`` on a judge log with items fits the leaderboard with a cluster bootstrap over items
(``interval="bootstrap", cluster="item", n_resamples=200, rng=0``: the report's defaults,
``evalkit.report.sections.leaderboard_section``). The audit found Code Llama (7B)'s interval 64 Elo wide
there against CR1's 160, because the bootstrap silently dropped 127 of 200 degenerate replicates. This
prints, for every model, both widths and their ratio, the bootstrap's degenerate share and handling, and
whether Code Llama (7B)'s default width is within 15 % of the CR1-t width.

    python scripts/llmfao_widths.py
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import pandas as pd

from evalkit.io import read_comparisons
from evalkit.ratings import leaderboard

FILE = Path(__file__).resolve().parents[1] / "data" / "llmfao" / "gpt4-comparisons.csv"
MODEL = "Code Llama (7B)"


def widths() -> tuple[pd.DataFrame, dict, dict]:
    frame, _ = read_comparisons(str(FILE))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        boot = leaderboard(frame, interval="bootstrap", cluster="item", n_resamples=200, rng=0)
    cr1 = leaderboard(frame, interval="sandwich", cluster="item")
    out = pd.DataFrame({
        "default (report)": (boot["ci_high"] - boot["ci_low"]).to_numpy(),
        "CR1 t(G-1)": (cr1.set_index("model").loc[boot["model"], "ci_high"]
                       - cr1.set_index("model").loc[boot["model"], "ci_low"]).to_numpy(),
    }, index=boot["model"].to_numpy())
    out["ratio"] = out["default (report)"] / out["CR1 t(G-1)"]
    attrs = dict(boot.attrs)
    attrs["warnings"] = [str(w.message) for w in caught]
    return out, attrs, dict(cr1.attrs)


def main() -> None:
    print(f"load before {os.getloadavg()}")
    t0 = time.perf_counter()
    table, attrs, cr1_attrs = widths()
    pd.set_option("display.width", 160)
    print(table.round(3).to_string())
    print(f"\ndefault interval: {attrs.get('interval')}")
    print(f"degenerate replicates: {attrs.get('n_degenerate')} of {attrs.get('n_resamples')} "
          f"({attrs.get('degenerate_share')}); handling: {attrs.get('degenerate_handling')}; "
          f"fallback: {attrs.get('fallback')}; warnings: {attrs['warnings']}")
    print(f"CR1 interval: {cr1_attrs.get('interval')} ({cr1_attrs.get('n_clusters')} clusters)")
    r = table.loc[MODEL]
    print(f"\n{MODEL}: default {r['default (report)']:.1f} Elo, CR1-t {r['CR1 t(G-1)']:.1f} Elo, ratio {r['ratio']:.3f} "
          f"({'within' if abs(r['ratio'] - 1) <= 0.15 else 'NOT within'} 15 %)")
    print(f"median ratio over {len(table)} models {table['ratio'].median():.3f} "
          f"(range {table['ratio'].min():.3f}-{table['ratio'].max():.3f})")
    print(f"{time.perf_counter() - t0:.1f} s wall; load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
