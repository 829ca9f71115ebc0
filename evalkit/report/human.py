"""``--human LABELS``: the judge corrected with human labels, beside the judge-only and human-only numbers.

A label file (CSV, JSONL or Parquet) holds one human label per judged unit, in a ``human`` column:

* for a **judge log** (``evalkit report LOG``, ``evalkit judge``): ``item`` (or ``task``), ``player_a``,
  ``player_b`` and ``human`` = player_a's score (1 win, 0.5 tie, 0 loss; or the words ``player_a`` /
  ``player_b`` / ``tie``, ``a`` / ``b``). A unit is an item and an unordered pair; the judge's value is
  the mean of its verdicts on it (both orders). For ``evalkit judge`` the players are systems (one
  transcript per system and task) or transcript ids.
* for **scored runs** (``evalkit compare``): ``system``, ``task`` and ``human`` = the human's score of
  that system's run of the task (the harness's, often model-graded, score is the judge).

For every system (and, in ``compare``, every pair's difference candidate - baseline) the report gives
the judge-only mean, the human-only mean and interval, PPI and PPI++ (:func:`evalkit.stats.ppi.ppi_mean`)
and, for 0/1 labels, Rogan–Gladen; and the judge's sensitivity, specificity and Cohen's kappa against
the humans. The labelled units must be a random sample of the units.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain

__all__ = ["read_labels", "pairwise_units", "score_units", "difference_units", "correction_table", "human_section"]

_WORDS = {"player_a": 1.0, "a": 1.0, "model_a": 1.0, "left": 1.0, "player_b": 0.0, "b": 0.0, "model_b": 0.0,
          "right": 0.0, "tie": 0.5}


def read_labels(path: str | Path) -> pd.DataFrame:
    """The label table, with ``human`` as a number (words mapped; see the module notes)."""
    from evalkit.io._files import load_records

    frame, _ = load_records(Path(path))
    frame = frame.rename(columns={"task": "item"}) if "item" not in frame and "task" in frame else frame
    if "human" not in frame.columns:
        raise ValueError(f"--human {path}: the label file needs a 'human' column (the human's label); it has "
                         f"{[c for c in frame.columns if c != '_line']}.")
    raw = frame["human"]
    words = raw.astype(str).str.strip().str.lower().map(_WORDS)
    num = pd.to_numeric(raw, errors="coerce")
    value = num.where(num.notna(), words)
    bad = value.isna() | (value < 0) | (value > 1)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        line = int(frame["_line"].iloc[first]) if "_line" in frame else first + 1
        raise ValueError(f"--human {path} line {line}: the label {raw.iloc[first]!r} is not a score in [0, 1] or one "
                         f"of {sorted(_WORDS)} ({int(bad.sum())} such labels).")
    frame = frame.assign(human=value.astype(float))
    for c in ("item", "player_a", "player_b", "system"):
        if c in frame:
            frame[c] = frame[c].astype(str)
    return frame


def _unordered(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = a.astype(str).to_numpy(), b.astype(str).to_numpy()
    swap = np.asarray(x > y)
    return np.asarray(np.where(swap, y, x)), np.asarray(np.where(swap, x, y)), swap


def pairwise_units(comparisons: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, item, opponent): the judge's mean score of the system there and the human's.

    Returns
    -------
    DataFrame
        ``group`` (the system), ``item``, ``opponent``, ``judge``, ``human`` (NaN where unlabelled).
    """
    need = [c for c in ("item", "player_a", "player_b") if c not in labels.columns]
    if need:
        raise ValueError(f"--human labels for a judge log need the columns item (or task), player_a, player_b and "
                         f"human; they lack {need}.")
    if "item" not in comparisons or comparisons["item"].isna().any():
        raise ValueError("--human needs the judge log's item (task) column to match labels to judgements; this "
                         "log has none.")
    c = comparisons
    lo, hi, swap = _unordered(c["player_a"], c["player_b"])
    score_lo = np.where(swap, 1.0 - c["outcome"].to_numpy(float), c["outcome"].to_numpy(float))
    judged = pd.DataFrame({"item": c["item"].astype(str).to_numpy(), "lo": lo, "hi": hi, "s": score_lo})
    judged = judged.groupby(["item", "lo", "hi"], as_index=False)["s"].mean()
    llo, lhi, lswap = _unordered(labels["player_a"], labels["player_b"])
    hl = pd.DataFrame({"item": labels["item"].astype(str).to_numpy(), "lo": llo, "hi": lhi,
                       "h": np.where(lswap, 1.0 - labels["human"].to_numpy(float), labels["human"].to_numpy(float))})
    hl = hl.groupby(["item", "lo", "hi"], as_index=False)["h"].mean()
    m = judged.merge(hl, on=["item", "lo", "hi"], how="left")
    unmatched = len(hl) - int(m["h"].notna().sum())
    rows = pd.concat([
        pd.DataFrame({"group": m["lo"], "item": m["item"], "opponent": m["hi"], "judge": m["s"], "human": m["h"]}),
        pd.DataFrame({"group": m["hi"], "item": m["item"], "opponent": m["lo"], "judge": 1 - m["s"],
                      "human": 1 - m["h"]}),
    ], ignore_index=True)
    rows.attrs["unmatched_labels"] = unmatched
    return rows


def score_units(outcomes: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Per (system, task): the harness's (judge's) mean score over runs and the human's label."""
    need = [c for c in ("system", "item") if c not in labels.columns]
    if need:
        raise ValueError(f"--human labels for compare need the columns system, task and human; they lack "
                         f"{['task' if c == 'item' else c for c in need]}.")
    judged = outcomes.groupby(["system", "task"], as_index=False)["score"].mean()
    judged["system"], judged["task"] = judged["system"].astype(str), judged["task"].astype(str)
    hl = labels.groupby(["system", "item"], as_index=False)[["human"]].mean().rename(columns={"item": "task"})
    m = judged.merge(hl, on=["system", "task"], how="left")
    out = pd.DataFrame({"group": m["system"], "item": m["task"], "judge": m["score"], "human": m["human"]})
    out.attrs["unmatched_labels"] = len(hl) - int(m["human"].notna().sum())
    return out


def difference_units(units: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """Per pair (a, b) and task: judge and human difference b - a (human only where both are labelled)."""
    rows = []
    for a, b in pairs:
        ua = units[units["group"] == a].set_index("item")
        ub = units[units["group"] == b].set_index("item")
        common = ua.index.intersection(ub.index)
        if common.empty:
            continue
        rows.append(pd.DataFrame({"group": f"{b} - {a}", "item": common,
                                  "judge": ub.loc[common, "judge"].to_numpy() - ua.loc[common, "judge"].to_numpy(),
                                  "human": ub.loc[common, "human"].to_numpy() - ua.loc[common, "human"].to_numpy()}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["group", "item", "judge", "human"])


def correction_table(units: pd.DataFrame, *, confidence_level: float = 0.95,
                     min_labels: int = 10) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Per group: every estimate of :func:`evalkit.stats.ppi.correct_judge`, and the judge's agreement with
    the humans. Groups with fewer than ``min_labels`` labelled units are listed in the notes, not estimated."""
    from evalkit.stats.ppi import correct_judge

    est_rows, agree_rows, notes = [], [], []
    for group, sub in units.groupby("group", sort=False):
        lab = sub[sub["human"].notna()]
        unl = sub[sub["human"].isna()]
        if len(lab) < min_labels or unl.empty:
            notes.append(f"{plain(group)}: {len(lab)} labelled and {len(unl)} judge-only units; PPI needs at least "
                         f"{min_labels} labelled units and some judge-only ones")
            continue
        try:
            res = correct_judge(lab["human"].to_numpy(float), lab["judge"].to_numpy(float),
                                unl["judge"].to_numpy(float), confidence_level=confidence_level)
        except ValueError as exc:
            notes.append(f"{plain(group)}: not corrected ({exc})")
            continue
        est_rows.append(res.table.assign(group=group, labelled=len(lab), judge_only_units=len(unl)))
        a = res.agreement
        row: dict[str, Any] = {"group": group, "labelled": a.n, "agreement": a.agreement.estimate}
        if a.kappa is not None:
            row["kappa"] = a.kappa.estimate  # type: ignore[attr-defined]
            row["kappa_ci_low"], row["kappa_ci_high"] = a.kappa.confidence_interval()  # type: ignore[attr-defined]
        for name, e in (("sensitivity", a.sensitivity), ("specificity", a.specificity)):
            if e is not None:
                row[name] = e.estimate
                row[f"{name}_ci_low"], row[f"{name}_ci_high"] = e.confidence_interval()
        agree_rows.append(row)
        if res.note:
            notes.append(f"{plain(group)}: {res.note}")
    est = pd.concat(est_rows, ignore_index=True) if est_rows else pd.DataFrame()
    if not est.empty:
        est = est[["group", "method", "estimate", "ci_low", "ci_high", "width", "se", "lambda", "n", "labelled",
                   "judge_only_units"]]
    return est, pd.DataFrame(agree_rows), notes


def human_section(ctx: ReportContext) -> Section | None:
    """The corrected estimates (``ctx.params["human_units"]``, a units frame) and the judge's agreement."""
    units = ctx.params.get("human_units")
    labels = ctx.params.get("human_labels")
    if not isinstance(units, pd.DataFrame) and isinstance(labels, pd.DataFrame) and ctx.comparisons is not None:
        units = pairwise_units(ctx.comparisons, labels)  # evalkit report LOG --human LABELS
        ctx.params.setdefault("human_what", "win rate of each system (per item and opponent)")
    if not isinstance(units, pd.DataFrame):
        return None
    level = float(ctx.params.get("confidence_level", 0.95))
    est, agree, notes = correction_table(units, confidence_level=level)
    what = ctx.params.get("human_what", "mean score")
    src = ctx.params.get("human_source", "the label file")
    blocks: list[Any] = [Text(
        f"Human labels from {plain(src)} correct the judge's {what}: PPI (Angelopoulos et al. 2023) and PPI++ "
        f"(power-tuned lambda, Angelopoulos, Duchi & Zrnic 2023) combine the judge's labels on every unit with the "
        f"humans' on the labelled ones; unbiased whatever the judge's errors, with {level:.0%} normal intervals. "
        "Human-only: the labelled units alone (lambda = 0). Rogan-Gladen (0/1 labels): the closed-form correction "
        "by the judge's sensitivity and specificity, delta-method interval. Assumes the labelled units are a random "
        "sample of the units.")]
    unmatched = int(units.attrs.get("unmatched_labels", 0))
    if unmatched:
        notes.append(f"{unmatched} label(s) match no judged unit and are not used")
    if not est.empty:
        blocks.append(Table(est, floatfmt=".4g", csv="tables/human_correction.csv"))
        pp = est[est["method"] == "PPI++ (tuned lambda)"].set_index("group")
        hu = est[est["method"] == "human labels only"].set_index("group")
        lines = []
        for g in pp.index:
            ratio = pp.loc[g, "width"] / hu.loc[g, "width"] if hu.loc[g, "width"] > 0 else np.nan
            ctx.results.setdefault("human_findings", []).append(
                {"group": g, "estimate": float(pp.loc[g, "estimate"]), "ci_low": float(pp.loc[g, "ci_low"]),
                 "ci_high": float(pp.loc[g, "ci_high"]), "width_ratio": float(ratio)})
            lines.append(f"{plain(g)}: PPI++ {pp.loc[g, 'estimate']:.3g} [{pp.loc[g, 'ci_low']:.3g}, "
                         f"{pp.loc[g, 'ci_high']:.3g}], {ratio:.2f}x the width of the human-only interval "
                         f"(judge alone: {float(est[(est['group'] == g)]['estimate'].iloc[0]):.3g})")
        blocks.append(Bullets(tuple(lines)))
    if not agree.empty:
        blocks.append(Text("The judge against the humans on the labelled units (sensitivity and specificity with "
                           "Wilson intervals, for 0/1 labels; Cohen's kappa with its asymptotic interval):"))
        blocks.append(Table(agree, floatfmt=".3g", csv="tables/human_agreement.csv"))
    if notes:
        blocks.append(Bullets(tuple(notes)))
    return Section("Judge corrected with human labels", tuple(blocks))
