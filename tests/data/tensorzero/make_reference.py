"""Writes ``betting_cs_reference.json``: tensorzero's own betting confidence sequence run on fixed inputs.

Source: tensorzero/tensorzero, ``evaluations/src/betting_confidence_sequences.rs`` at commit
``552cb47e87cf2767767ffd14ead89b5525c26a85^`` (the file was removed in 552cb47; Apache-2.0). To rebuild:

1. ``git show 552cb47e87cf2767767ffd14ead89b5525c26a85^:evaluations/src/betting_confidence_sequences.rs > tz.rs``
2. make it dependency-free: replace ``use anyhow::{Result, bail}; use serde::{...};`` with
   ``type Result<T> = std::result::Result<T, String>;`` and a ``bail!`` macro returning ``Err(format!(..))``,
   drop the serde derives and the ``tracing::warn!`` line; append the ``main`` below (:data:`MAIN`);
3. ``rustc --edition 2024 --test -O tz.rs && ./tz`` (tensorzero's 50 tests pass: 50 passed, rustc 1.95.0), then
   ``rustc --edition 2024 -O tz.rs -o tz_main`` and ``python make_reference.py ./tz_main``.

Each case: grid resolution, alpha (tensorzero stores it as f32), batch size, observations; the output is
``cs_lower, cs_upper, mean_est, variance_regularized`` after every batch (``update_betting_cs``, hedge 0.5).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

MAIN = r'''
fn main() {
    use std::io::BufRead;
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let v: Vec<&str> = line.split_whitespace().collect();
        if v.is_empty() { continue; }
        let res: usize = v[0].parse().unwrap();
        let alpha: f32 = v[1].parse().unwrap();
        let batch: usize = v[2].parse().unwrap();
        let xs: Vec<f64> = v[3..].iter().map(|s| s.parse().unwrap()).collect();
        let mut cs = MeanBettingConfidenceSequence::new("x".to_string(), res, alpha);
        let mut out = Vec::new();
        for chunk in xs.chunks(batch) {
            cs = update_betting_cs(cs, chunk.to_vec(), None).unwrap();
            out.push(format!("{:.17e},{:.17e},{:.17e},{:.17e}", cs.cs_lower, cs.cs_upper, cs.mean_est,
                             cs.variance_regularized));
        }
        println!("{}", out.join(";"));
    }
}
'''


def cases() -> list[dict]:
    gen = np.random.default_rng(20260103)
    known = [0.5, 0.9, 0.6, 0.8, 0.7, 0.75, 0.65, 0.72, 0.68, 0.7]
    out = [{"resolution": 101, "alpha": 0.05, "batch": 10, "x": known},
           {"resolution": 101, "alpha": 0.05, "batch": 1, "x": known}]
    draws = {
        "beta(2,5)": gen.beta(2, 5, 80),
        "bernoulli(0.7)": gen.binomial(1, 0.7, 80).astype(float),
        "paired {0, .5, 1}": gen.choice([0.0, 0.5, 1.0], 120, p=[0.2, 0.45, 0.35]),
        "uniform": gen.uniform(0, 1, 60),
    }
    for name, x in draws.items():
        for res, batch, alpha in ((1001, 1, 0.05), (101, 7, 0.1)):
            out.append({"name": name, "resolution": res, "alpha": alpha, "batch": batch,
                        "x": [float(v) for v in np.round(x, 6)]})
    return out


def main(binary: str) -> None:
    spec = cases()
    lines = "\n".join(f"{c['resolution']} {c['alpha']} {c['batch']} " + " ".join(repr(v) for v in c["x"])
                      for c in spec)
    res = subprocess.run([binary], input=lines, capture_output=True, text=True, check=True).stdout.splitlines()
    for c, row in zip(spec, res, strict=True):
        c["after_batch"] = [[float(v) for v in step.split(",")] for step in row.split(";")]
    Path(__file__).with_name("betting_cs_reference.json").write_text(json.dumps(spec, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
