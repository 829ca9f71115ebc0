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
from evalkit.stats.scores import check_columns, paired_scores
from evalkit.stats.sign import sign_test
from evalkit.stats.ttest import paired_ttest, welch_ttest

__all__ = ["UnitComparison", "compare_units", "results_table"]


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
        Tasks scored for only one system (left out of both the trial-level and the task-level tests).
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
    df = _two_systems(scores, a, b, system=system, task=task, trial=trial, score=score, alpha=alpha)
    task_means = df.groupby([system, task], sort=True)[score].mean().rename("score").reset_index()
    paired = paired_scores(task_means, a, b, system=system, item=task, score="score")
    unmatched = paired.only_a + paired.only_b
    # both units use the same tasks: a task only one system has would shift its trial means alone
    df = df[df[task].astype(str).isin(set(paired.frame["item"].astype(str)))]
    trial_means = df.groupby([system, trial], sort=True)[score].mean().rename("mean").reset_index()
    ta = trial_means.loc[trial_means[system] == a, "mean"].to_numpy()
    tb = trial_means.loc[trial_means[system] == b, "mean"].to_numpy()
    trial_res = welch_ttest(ta, tb)
    sign_res = sign_test(paired.frame["a"], paired.frame["b"], ties=ties)
    pt_res = paired_ttest(paired.frame["a"], paired.frame["b"])
    n_tasks = len(paired.frame)
    explanation = _explanation(sign_res, (trial_res, sign_res, pt_res), alpha)
    if unmatched:
        explanation += f" {len(unmatched)} tasks scored for only one system were left out: {list(unmatched)[:10]}."
    return UnitComparison(
        a=a, b=b, trial_level=trial_res, task_sign=sign_res, task_paired_t=pt_res, n_tasks=n_tasks,
        n_trials_a=int(ta.size), n_trials_b=int(tb.size), unmatched_tasks=tuple(unmatched), alpha=float(alpha),
        verdict=_verdict(trial_res, sign_res, pt_res, n_trials=(ta.size, tb.size), n_tasks=n_tasks, alpha=alpha),
        explanation=explanation, trial_means=trial_means, task_means=task_means,
    )


def _two_systems(
    scores: pd.DataFrame, a: str, b: str, *, system: str, task: str, trial: str, score: str, alpha: float,
) -> pd.DataFrame:
    """The score columns of systems a and b (system as str), after checking columns, alpha and missing scores."""
    check_columns(scores, {"system": system, "task": task, "trial": trial, "score": score})
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha!r}.")
    df = scores[[system, task, trial, score]].copy()
    df[system] = df[system].astype(str)
    nan = df[score].isna()
    if nan.any():
        raise ValueError(f"Column {score!r} has {int(nan.sum())} missing scores; score failed runs explicitly "
                         "(e.g. 0) or drop them before comparing.")
    return df[df[system].isin([a, b])]


def _verdict(
    trial_res: TestResult, sign_res: SignTestResult, pt_res: TestResult, *, n_trials: tuple[int, int],
    n_tasks: int, alpha: float,
) -> str:
    """Which unit supports which conclusion, with the p-values."""

    def say(r: TestResult) -> str:
        return "significant" if r.pvalue < alpha else "not significant"

    return (
        f"Trial as the unit (Welch over {n_trials[0]} vs {n_trials[1]} trial means): p = {trial_res.pvalue:.4g}, "
        f"{say(trial_res)} at alpha = {alpha:g} -> a statement about re-running these {n_tasks} tasks. "
        f"Task as the unit ({n_tasks} tasks): sign test {sign_res.wins} wins / {sign_res.losses} losses / "
        f"{sign_res.ties} ties, p = {sign_res.pvalue:.4g} ({say(sign_res)}); paired t p = {pt_res.pvalue:.4g} "
        f"({say(pt_res)}) -> a statement about tasks like these."
    )


def _explanation(sign_res: SignTestResult, results: tuple[TestResult, ...], alpha: float) -> str:
    """Why the units can disagree, with the sign test's minimum number of wins, and whether they do here."""
    need = sign_test_min_wins(sign_res.n, alpha=alpha) if sign_res.n >= 1 else None
    need_txt = (f"with {sign_res.n} non-tied tasks the sign test needs {need} wins for p < {alpha:g}"
                if need is not None else f"with {sign_res.n} non-tied tasks no outcome of the sign test reaches p < {alpha:g}")
    return (
        "The trial-level test averages every trial over the same tasks, so task-to-task differences cancel "
        "and only run-to-run noise remains in its standard error; it cannot say whether the advantage "
        "carries over to other tasks. The task-level tests treat tasks as the sample, so the spread of the "
        f"effect across tasks enters the error, and {need_txt}. "
        + ("Here the two units disagree: report both, and generalise to new tasks only from the task-level result."
           if not (all(r.pvalue < alpha for r in results) or all(r.pvalue >= alpha for r in results))
           else "Here both units reach the same decision.")
    )
