"""Head-to-head tests between players that met directly, adjusted for multiplicity.

For comparison logs without a shared baseline (Arena-style battles, LLMFAO), the direct
evidence that A beats B is their own games: an exact binomial (sign) test of A's wins among
the decisive games, with the tie policy named, and the win rate (ties as half) with a Wilson
interval. The family of tested pairs is adjusted (Holm by default).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.stats.multiplicity import MultiplicityResult, adjust_pvalues
from evalkit.stats.proportions import win_rate
from evalkit.stats.sign import sign_test_from_counts

__all__ = ["head_to_head"]


def head_to_head(
    comparisons: pd.DataFrame, *, pairs: str | Sequence[tuple[str, str]] = "adjacent",
    order: Sequence[str] | None = None, ties: str = "drop", adjust: str = "holm", alpha: float = 0.05,
    confidence_level: float = 0.95, family: str | None = None,
) -> tuple[pd.DataFrame, MultiplicityResult | None]:
    """Exact binomial tests of direct games between pairs of players.

    Parameters
    ----------
    comparisons : DataFrame
        Canonical comparisons frame (outcomes 0, 0.5, 1; weights integral).
    pairs : {"adjacent", "all"} or list of (a, b)
        Neighbours in ``order`` (that met), all pairs that met, or given pairs.
    order : sequence of str, optional
        Player order for ``"adjacent"``/``"all"`` (e.g. the leaderboard); default: win rate.
    ties : {"drop", "loss", "win"}
        Tie policy of the sign test.
    adjust, alpha, confidence_level, family
        Multiplicity correction over the tested pairs, and the interval level of win rates.

    Returns
    -------
    (DataFrame, MultiplicityResult or None)
        One row per pair: ``a, b, wins_a, wins_b, ties, win_rate, ci_low, ci_high, pvalue,
        pvalue_adjusted, reject, note``. Pairs that never met (given explicitly) are listed
        with a note.
    """
    from evalkit.ratings import aggregate

    counts = aggregate(comparisons)
    players = list(counts.players)
    n = len(players)
    w = np.zeros((n, n))
    t = np.zeros((n, n))
    np.add.at(w, (counts.i, counts.j), counts.wins_i)
    np.add.at(w, (counts.j, counts.i), counts.wins_j)
    np.add.at(t, (counts.i, counts.j), counts.ties)
    t = t + t.T
    met = (w + w.T + t) > 0
    if order is None:
        rate = (w.sum(1) + t.sum(1) / 2) / np.maximum((w + w.T + t).sum(1), 1e-300)
        order = [players[k] for k in np.argsort(-rate, kind="stable")]
    idx = {p: k for k, p in enumerate(players)}
    order = [p for p in order if p in idx]
    if isinstance(pairs, str):
        if pairs == "all":
            todo = [(a, b) for x, a in enumerate(order) for b in order[x + 1:] if met[idx[a], idx[b]]]
        elif pairs == "adjacent":
            todo = [(a, b) for a, b in zip(order[:-1], order[1:], strict=True)]
        else:
            raise ValueError(f"pairs must be 'adjacent', 'all' or a list of (a, b); got {pairs!r}.")
    else:
        todo = [(str(a), str(b)) for a, b in pairs]
        unknown = sorted({p for ab in todo for p in ab} - set(idx))
        if unknown:
            raise ValueError(f"Unknown players in pairs: {unknown}.")
    rows = []
    for a, b in todo:
        i, j = idx[a], idx[b]
        wa, wb, tt = w[i, j], w[j, i], t[i, j]
        row = {"a": a, "b": b, "wins_a": wa, "wins_b": wb, "ties": tt}
        if wa + wb + tt == 0:
            row["note"] = "never met directly"
        elif not all(float(v).is_integer() for v in (wa, wb, tt)):
            row["note"] = "fractional counts (continuous outcomes or weights): use paired tests on scores"
        else:
            wr = win_rate(int(wa), int(wb), int(tt), confidence_level=confidence_level)
            lo, hi = wr.confidence_interval()
            row.update(win_rate=wr.estimate, ci_low=lo, ci_high=hi, note="")
            try:
                row["pvalue"] = sign_test_from_counts(int(wa), int(wb), int(tt), tie_policy=ties).pvalue
            except ValueError as exc:  # e.g. a single game, or only ties
                row["note"] = f"not tested: {exc}"

        rows.append(row)
    cols = ["a", "b", "wins_a", "wins_b", "ties", "win_rate", "ci_low", "ci_high", "pvalue", "pvalue_adjusted",
            "reject", "note"]
    table = pd.DataFrame(rows).reindex(columns=cols)
    tested = table["pvalue"].notna()
    mult = None
    reject = pd.array([pd.NA] * len(table), dtype="boolean")
    if tested.any():
        fam = family or f"{int(tested.sum())} head-to-head sign tests ({pairs if isinstance(pairs, str) else 'given pairs'})"
        mult = adjust_pvalues(table.loc[tested, "pvalue"].to_numpy(float), method=adjust, alpha=alpha, family=fam,
                              names=[f"{a} vs {b}" for a, b in zip(table.loc[tested, "a"], table.loc[tested, "b"],
                                                                     strict=True)])
        table.loc[tested, "pvalue_adjusted"] = np.asarray(mult.adjusted, dtype=float)
        reject[np.flatnonzero(tested.to_numpy())] = np.asarray(mult.reject, dtype=bool)
    table["reject"] = reject
    return table, mult
