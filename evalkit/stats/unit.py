"""The unit of analysis made explicit: aligning paired scores, and trial- vs task-level tests.

Seed 002: two systems run five trials of the same twelve tasks. Welch over the five trial
means gives p = 0.0053; a sign test over the twelve task means gives p = 0.2266. Both are
right answers to different questions:

* **trial as the unit** asks whether a re-run of *these* twelve tasks would favour the same
  system. Task-to-task variation is held fixed (every trial mean averages the same tasks),
  so only run-to-run noise enters the standard error; the conclusion does not extend to
  other tasks.
* **task as the unit** asks whether the advantage holds for *tasks like these*; task-to-task
  heterogeneity enters the error, and with twelve tasks a sign test needs 10 wins of 11 or
  12 non-tied tasks for p < .05.

:func:`compare_units` returns both, side by side, with the reason when they disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit.stats._result import SignTestResult, TestResult
from evalkit.stats.power import sign_test_min_wins
from evalkit.stats.sign import sign_test
from evalkit.stats.ttest import paired_ttest, welch_ttest

__all__ = ["PairedScores", "paired_scores", "UnitComparison", "compare_units", "results_table"]


@dataclass(frozen=True)
class PairedScores:
    """Scores of two systems aligned on shared items, and what could not be aligned.

    Attributes
    ----------
    frame : DataFrame
        Columns ``item``, ``a``, ``b`` (one row per shared item, sorted by item).
    a, b : str
        The two systems.
    only_a, only_b : tuple of str
        Items scored for one system only (or with a missing score for the other).
    """

    frame: pd.DataFrame
    a: str
    b: str
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    @property
    def report(self) -> str:
        """One line saying how many items were paired and how many were not, and why."""
        return (f"{len(self.frame)} shared items paired; {len(self.only_a)} items only scored for "
                f"{self.a!r} and {len(self.only_b)} only for {self.b!r} were left out of the paired test.")


def _check_columns(frame: pd.DataFrame, cols: dict[str, str]) -> None:
    missing = [f"{role}={col!r}" for role, col in cols.items() if col not in frame.columns]
    if missing:
        raise ValueError(f"Missing column(s) {', '.join(missing)}; the table has {list(frame.columns)}.")


def paired_scores(
    frame: pd.DataFrame, a: str, b: str, *, system: str = "system", item: str = "item",
    score: str = "score", duplicates: str = "error",
) -> PairedScores:
    """Align two systems' scores on shared items of a long table (system, item, score).

    Parameters
    ----------
    frame : DataFrame
        One row per (system, item) score.
    a, b : str
        The systems to pair.
    system, item, score : str
        Column names.
    duplicates : {"error", "mean"}
        What to do when a system has several scores for one item.

    Returns
    -------
    PairedScores
        The aligned frame plus the unmatched items of each side (rows with a missing score
        count as unmatched): nothing is dropped silently.
    """
    _check_columns(frame, {"system": system, "item": item, "score": score})
    if a == b:
        raise ValueError(f"a and b must be different systems; got {a!r} twice.")
    sys_col = frame[system].astype(str)
    present = set(sys_col.unique())
    for s in (a, b):
        if s not in present:
            raise ValueError(f"System {s!r} is not in column {system!r}; found {sorted(present)[:10]}.")
    sub = frame.loc[sys_col.isin([a, b]), [system, item, score]].copy()
    sub[system] = sub[system].astype(str)
    sub[item] = sub[item].astype(str)
    dup = sub.duplicated([system, item], keep=False)
    if dup.any() and duplicates == "error":
        first = sub.loc[dup].iloc[0]
        raise ValueError(
            f"{int(dup.sum())} rows repeat a (system, item) pair (first: {first[system]!r}, item "
            f"{first[item]!r}); pass duplicates='mean' to average them or deduplicate first."
        )
    if duplicates not in ("error", "mean"):
        raise ValueError(f"duplicates must be 'error' or 'mean'; got {duplicates!r}.")
    wide = sub.dropna(subset=[score]).pivot_table(index=item, columns=system, values=score, aggfunc="mean")
    wide = wide.reindex(columns=[a, b])
    all_a = set(sub.loc[sub[system] == a, item])
    all_b = set(sub.loc[sub[system] == b, item])
    both = wide.dropna()
    shared = set(both.index)
    only_a = tuple(sorted(all_a - shared))
    only_b = tuple(sorted(all_b - shared))
    out = pd.DataFrame({"item": both.index.to_numpy(), "a": both[a].to_numpy(float),
                        "b": both[b].to_numpy(float)})
    return PairedScores(frame=out.reset_index(drop=True), a=a, b=b, only_a=only_a, only_b=only_b)


def results_table(results: dict[str, TestResult]) -> pd.DataFrame:
    """Tidy table of named test results: one row per test with method, n, statistic, df, p, CI, effect."""
    rows = []
    for name, r in results.items():
        ci = r.confidence_interval() if r._ci is not None else (np.nan, np.nan)
        rows.append({
            "test": name, "method": r.method, "n": r.n, "statistic": r.statistic,
            "statistic_name": r.statistic_name, "df": r.df, "pvalue": r.pvalue,
            "estimate": r.estimate, "estimate_name": r.estimate_name,
            "ci_low": ci[0], "ci_high": ci[1], "confidence_level": r.confidence_level,
            "effect_size": r.effect_size, "effect_size_name": r.effect_size_name,
            "handling": r.handling,
        })
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class UnitComparison:
    """Trial-level and task-level tests of the same two systems, side by side.

    Attributes
    ----------
    a, b : str
        The systems (differences are a - b).
    trial_level : TestResult
        Welch's t-test over per-trial means (each the mean over all tasks of that trial).
    task_sign : SignTestResult
        Exact sign test over per-task means (mean over trials).
    task_paired_t : TestResult
        Paired t-test over per-task means.
    n_tasks, n_trials_a, n_trials_b : int
    unmatched_tasks : tuple of str
        Tasks scored for only one system (left out of the task-level tests).
    alpha : float
    verdict : str
        Which unit supports which conclusion.
    explanation : str
        Why the two units can disagree, with the numbers of this comparison.
    """

    a: str
    b: str
    trial_level: TestResult
    task_sign: SignTestResult
    task_paired_t: TestResult
    n_tasks: int
    n_trials_a: int
    n_trials_b: int
    unmatched_tasks: tuple[str, ...]
    alpha: float
    verdict: str
    explanation: str
    trial_means: pd.DataFrame = field(repr=False)
    task_means: pd.DataFrame = field(repr=False)

    @property
    def agree(self) -> bool:
        """True if the trial-level and both task-level tests reach the same decision at ``alpha``."""
        sig = [r.pvalue < self.alpha for r in (self.trial_level, self.task_sign, self.task_paired_t)]
        return all(sig) or not any(sig)

    def to_frame(self) -> pd.DataFrame:
        """One row per test with a ``unit`` column ("trial" or "task")."""
        table = results_table({"trial level: Welch over trial means": self.trial_level,
                               "task level: sign test over task means": self.task_sign,
                               "task level: paired t over task means": self.task_paired_t})
        table.insert(0, "unit", ["trial", "task", "task"])
        table["significant"] = table["pvalue"] < self.alpha
        return table


def compare_units(
    scores: pd.DataFrame, a: str, b: str, *, system: str = "system", task: str = "task",
    trial: str = "trial", score: str = "score", alpha: float = 0.05, ties: str = "drop",
) -> UnitComparison:
    """Test a vs b with the trial as the unit and with the task as the unit.

    Parameters
    ----------
    scores : DataFrame
        Long table with one score per (system, task, trial).
    a, b : str
        Systems to compare (effects are a - b).
    system, task, trial, score : str
        Column names.
    alpha : float
        Level used for the verdict.
    ties : {"drop", "loss", "win"}
        Tie policy of the task-level sign test.

    Returns
    -------
    UnitComparison
    """
    _check_columns(scores, {"system": system, "task": task, "trial": trial, "score": score})
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    df = scores[[system, task, trial, score]].copy()
    df[system] = df[system].astype(str)
    nan = df[score].isna()
    if nan.any():
        raise ValueError(f"Column {score!r} has {int(nan.sum())} missing scores; score failed runs explicitly "
                         "(e.g. 0) or drop them before comparing.")
    df = df[df[system].isin([a, b])]
    trial_means = df.groupby([system, trial], sort=True)[score].mean().rename("mean").reset_index()
    ta = trial_means.loc[trial_means[system] == a, "mean"].to_numpy()
    tb = trial_means.loc[trial_means[system] == b, "mean"].to_numpy()
    task_means = df.groupby([system, task], sort=True)[score].mean().rename("score").reset_index()
    paired = paired_scores(task_means, a, b, system=system, item=task, score="score")
    unmatched = paired.only_a + paired.only_b
    trial_res = welch_ttest(ta, tb)
    sign_res = sign_test(paired.frame["a"], paired.frame["b"], ties=ties)
    pt_res = paired_ttest(paired.frame["a"], paired.frame["b"])

    def say(r: TestResult) -> str:
        return "significant" if r.pvalue < alpha else "not significant"

    n_tasks = len(paired.frame)
    verdict = (
        f"Trial as the unit (Welch over {ta.size} vs {tb.size} trial means): p = {trial_res.pvalue:.4g}, "
        f"{say(trial_res)} at alpha = {alpha:g} -> a statement about re-running these {n_tasks} tasks. "
        f"Task as the unit ({n_tasks} tasks): sign test {sign_res.wins} wins / {sign_res.losses} losses / "
        f"{sign_res.ties} ties, p = {sign_res.pvalue:.4g} ({say(sign_res)}); paired t p = {pt_res.pvalue:.4g} "
        f"({say(pt_res)}) -> a statement about tasks like these."
    )
    need = sign_test_min_wins(sign_res.n, alpha=alpha) if sign_res.n >= 1 else None
    need_txt = (f"with {sign_res.n} non-tied tasks the sign test needs {need} wins for p < {alpha:g}"
                if need is not None else f"with {sign_res.n} non-tied tasks no outcome of the sign test reaches p < {alpha:g}")
    explanation = (
        "The trial-level test averages every trial over the same tasks, so task-to-task differences cancel "
        "and only run-to-run noise remains in its standard error; it cannot say whether the advantage "
        "carries over to other tasks. The task-level tests treat tasks as the sample, so the spread of the "
        f"effect across tasks enters the error, and {need_txt}. "
        + ("Here the two units disagree: report both, and generalise to new tasks only from the task-level result."
           if not (all(r.pvalue < alpha for r in (trial_res, sign_res, pt_res))
                   or all(r.pvalue >= alpha for r in (trial_res, sign_res, pt_res)))
           else "Here both units reach the same decision.")
    )
    if unmatched:
        explanation += f" {len(unmatched)} tasks scored for only one system were left out: {list(unmatched)[:10]}."
    return UnitComparison(
        a=a, b=b, trial_level=trial_res, task_sign=sign_res, task_paired_t=pt_res, n_tasks=n_tasks,
        n_trials_a=int(ta.size), n_trials_b=int(tb.size), unmatched_tasks=tuple(unmatched), alpha=float(alpha),
        verdict=verdict, explanation=explanation, trial_means=trial_means, task_means=task_means,
    )
