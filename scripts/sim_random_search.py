"""Random search over the simulator's generator knobs (issue 13: refit only what the post leaves open).

The coordinate search of ``evalkit simulate calibrate`` moves one knob at a time from one start;
this script samples whole parameter sets at random (the agents' rules stay the post's, the
aggregator stays the mean curve) and scores each on the calibration seeds 100-105 (16 DAGs each,
common random numbers) by its *expected* counts on a fresh seed triple: each row's chance of
holding on one seed from its mean and seed-to-seed sd over the six seeds
(:func:`evalkit.sim.margins.margin_table`), then ``p_triple`` summed over all rows and over the
evidence rows (kinds of ``data/sim/claims.csv``). Every candidate is appended to ``--out`` (CSV,
one row per candidate with its full parameter set), so the history is complete even if the run
is stopped.

    python scripts/sim_random_search.py --n 240 --rng 20261201 --out data/sim/search_history.csv

``--fig11 100-104`` also runs figure 11 (model only) on those seeds for every candidate and records
``fig11_held`` (rows holding on >= 4 of 5) and ``f11_start`` (pass@1's first slope per seed); about
15 s more per candidate. ``--around JSON`` samples a Gaussian neighbourhood of a knob set instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.cli.simulate import _seed_group
from evalkit.sim.claims import claim_table
from evalkit.sim.experiments import ALL_PARTS, SimParams, load_params, run_variants
from evalkit.sim.margins import margin_table

ROOT = Path(__file__).resolve().parents[1]

#: knob -> (low, high, scale): uniform on [low, high] (``"log"``: log-uniform).
SPACE: dict[str, tuple[float, float, str]] = {
    "cost_growth": (4.0, 16.0, "lin"), "cost_shape": (0.7, 3.5, "lin"), "cost_sigma": (0.2, 1.5, "lin"),
    "cost_inherit": (0.0, 0.9, "lin"), "peak": (0.15, 0.5, "lin"), "steepness": (3.0, 14.0, "log"),
    "tail": (0.0, 0.6, "lin"), "merge_p": (0.2, 1.0, "lin"), "sibling_p": (0.0, 0.6, "lin"),
    "skip_decay": (0.4, 0.9, "lin"), "merge_alpha": (1.6, 3.2, "lin"), "select_beta": (0.5, 3.5, "log"),
    "mu_top": (-0.2, 1.5, "lin"), "mu_bottom": (-2.0, 0.0, "lin"), "fertility_sd": (0.0, 0.5, "lin"),
    "layer_noise": (0.1, 0.6, "lin"), "n_layers": (12.0, 24.0, "lin"),
}


def sample(g: np.random.Generator) -> dict[str, float]:
    out = {}
    for k, (lo, hi, scale) in SPACE.items():
        u = g.random()
        out[k] = float(np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))) if scale == "log" else lo + u * (hi - lo)
        out[k] = round(out[k], 3)
    return out


def fig11_score(params: SimParams, seeds: list[int]) -> dict:
    """Figure 11's rows on ``seeds`` (model only): rows holding on >= 4 of 5 seeds, F11.start's seeds and values."""
    from evalkit.studies import Figure11Config
    from evalkit.studies.fig11_claims import figure11_reproduction

    t = figure11_reproduction(Figure11Config(params=params, bootstrap=0), seeds=seeds)
    held = t.groupby("claim")["holds"].sum()
    start = t.loc[t["claim"] == "F11.start"]
    return {"fig11_held": int((held * 3 >= len(seeds) * 2).sum()), "fig11_rows": len(held),
            "f11_start_held": int(start["holds"].sum()), "f11_start": json.dumps([round(v, 1) for v in start["value"]])}


def score(base: SimParams, knobs: list[dict], seeds: list[int], evidence: set[str],
          fig11_seeds: list[int] | None = None) -> list[dict]:
    variants = {str(i): (dataclasses.replace(base, generator=base.generator.replace(**k)), ALL_PARTS)
                for i, k in enumerate(knobs)}
    res = run_variants(variants, seeds=seeds, n_dags=16)
    rows = []
    for i, k in enumerate(knobs):
        m = margin_table(claim_table(res[str(i)])).set_index("claim")
        rows.append({"expected_rows": float(m["p_triple"].sum()),
                     "expected_evidence": float(m.loc[m.index.isin(evidence), "p_triple"].sum()),
                     "rows_held": int((m["seeds_held"] * 3 >= m["n_seeds"] * 2).sum()),
                     **(fig11_score(variants[str(i)][0], fig11_seeds) if fig11_seeds else {}),
                     **{f"mean:{c}": float(v) for c, v in m["mean"].items()},
                     **{f"p:{c}": float(v) for c, v in m["p_triple"].items()},
                     "knobs": json.dumps(k, sort_keys=True)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=240)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rng", type=int, default=20261201)
    ap.add_argument("--seeds", type=_seed_group, default="100-105")
    ap.add_argument("--around", default=None, help="JSON knobs: sample a Gaussian neighbourhood instead")
    ap.add_argument("--width", type=float, default=0.1, help="neighbourhood sd as a share of each knob's range")
    ap.add_argument("--fig11", type=_seed_group, default=None,
                    help="also score figure 11 on these seeds ('A-B', model only)")
    ap.add_argument("--out", default=str(ROOT / "data" / "sim" / "search_history.csv"))
    a = ap.parse_args()
    kinds = pd.read_csv(ROOT / "data" / "sim" / "claims.csv")
    evidence = set(kinds.loc[kinds["kind"] == "evidence", "claim"])
    g = np.random.default_rng(a.rng)
    base = load_params()
    # a knob the --around JSON leaves out is centred on the bundled set's value, not on 0
    centre = {**dataclasses.asdict(base.generator), **json.loads(a.around)} if a.around else None

    def draw() -> dict[str, float]:
        if centre is None:
            return sample(g)
        out = {}
        for k, (klo, khi, _) in SPACE.items():
            out[k] = round(float(np.clip(centre[k] + a.width * (khi - klo) * g.standard_normal(), klo, khi)), 3)
        return out

    done = 0
    while done < a.n:
        knobs = [draw() for _ in range(min(a.batch, a.n - done))]
        t0 = time.time()
        rows = score(base, knobs, a.seeds, evidence, a.fig11)
        df = pd.DataFrame(rows).assign(seconds=(time.time() - t0) / len(rows), rng=a.rng, around=a.around or "")
        path = Path(a.out)
        df.to_csv(path, mode="a", header=not path.exists(), index=False)
        done += len(rows)
        best = df.sort_values("expected_evidence").iloc[-1]
        print(f"{done}/{a.n}  batch best: {best.expected_evidence:.1f} evidence, {best.expected_rows:.1f} rows", flush=True)


if __name__ == "__main__":
    main()
