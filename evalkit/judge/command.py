"""``evalkit judge`` in the library: judge transcripts into an output folder and analyse the verdicts.

:func:`judge_transcripts` is the one call: transcripts, a judge and a :class:`~evalkit.judge.runner.JudgeSpec`
in, a folder out::

    DIR/verdicts.jsonl               the append-only verdict log (every call: key, pair, verdict, raw answer)
    DIR/judge.json                   the judge, prompt and options the log was made with (a re-run must match)
    DIR/comparisons.csv              cross-system verdicts, canonical format, systems as players, task as item
    DIR/transcript_comparisons.csv   every verdict, canonical format, transcripts as players, task as item
    DIR/report/                      report.md / report.html / tables / run.json

Both CSVs are read by ``evalkit rate`` and ``evalkit report`` (``player_a`` is the first-shown answer, so
``rate --adjust-position`` measures the judge's position bias from them). Running again into the same DIR
resumes: logged answers are reused, and only what is missing is asked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._progress import ProgressFn
from evalkit.judge.log import LOG_NAME, VerdictLog
from evalkit.judge.models import JudgeModel
from evalkit.judge.runner import JudgeRun, JudgeSpec, run_judge
from evalkit.judge.transcripts import Transcript

__all__ = ["JudgeResult", "judge_transcripts", "analyse", "CONFIG_NAME"]

CONFIG_NAME = "judge.json"


@dataclass
class JudgeResult:
    """A judge run and its analysis (the tables of the report)."""

    run: JudgeRun
    out: Path
    frame: pd.DataFrame
    results: dict[str, Any]

    @property
    def rankings(self) -> Any:
        return self.results["rankings"]


def _config(judge: JudgeModel, spec: JudgeSpec) -> dict[str, Any]:
    return {"judge": judge.name, "prompt_sha256": spec.prompt.sha256, "prompt": spec.prompt.source,
            "pairs": spec.pairs, "top_k": spec.top_k, "both_orders": spec.both_orders, "seed": spec.rng,
            "task_order": spec.task_order, "max_repeats": spec.max_repeats}


def _prepare(out: Path, judge: JudgeModel, spec: JudgeSpec, force: bool) -> None:
    import shutil

    cfg_path = out / CONFIG_NAME
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} exists and is not a folder.")
    if out.is_dir() and any(out.iterdir()):
        if force:
            shutil.rmtree(out)
        elif not cfg_path.exists():
            raise ValueError(f"--out {str(out)!r} exists and holds no judge run ({CONFIG_NAME}); choose another folder, "
                             "or pass --force to replace it.")
        else:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))
            new = _config(judge, spec)
            clash = [k for k in ("judge", "prompt_sha256", "pairs", "seed", "top_k", "both_orders", "task_order",
                                 "max_repeats") if old.get(k) != new.get(k)]
            if clash:
                shown = ", ".join(f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in clash)
                raise ValueError(f"--out {str(out)!r} holds a judge run with other settings ({shown}); resume with the "
                                 "same settings, choose another --out, or pass --force to start over.")
    out.mkdir(parents=True, exist_ok=True)
    with open(cfg_path, "w", encoding="utf-8") as fh:
        json.dump(_config(judge, spec), fh, indent=1)


def analyse(run: JudgeRun, *, confidence_level: float = 0.95, rng: int = 0) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The canonical frame of a run's verdicts and every table of its report."""
    from evalkit.judge.analysis import (
        execution_noise,
        judged_frame,
        position_bias,
        system_comparison,
        task_rankings,
    )

    frame = judged_frame(run.records)
    results: dict[str, Any] = {
        "rankings": task_rankings(frame, run.transcripts, run.spec.k_for, confidence_level=confidence_level, rng=rng,
                                  calls=run.calls_per_task),
        "position": position_bias(frame, confidence_level=confidence_level) if len(frame) else (pd.DataFrame(), {}),
        "systems": system_comparison(frame, confidence_level=confidence_level,
                                     systems=list(dict.fromkeys(t.system for t in run.transcripts.values()))),
        "noise": execution_noise(frame, confidence_level=confidence_level) if len(frame) else {},
    }
    if run.settled.get("sequence"):
        results["stopping"] = _stopping_statement(run, confidence_level)
    return frame, results


def _stopping_statement(run: JudgeRun, level: float) -> str:
    from evalkit.stats.sequential import fixed_n_equal_power

    st = run.settled
    seq = st["sequence"]
    w = np.array([s["win_rate"] for s in seq])
    a, b = st["systems"]
    calls_per_task = st.get("calls", sum(run.calls_per_task.values())) / max(1, len(run.calls_per_task))
    if "task" in st and "direction" in st:
        text = (f"Settled after {st['tasks_judged']} of {st['tasks_available']} tasks ({st['calls']} judge calls): "
                f"{st['direction']}, the {level:.0%} confidence sequence on the per-task win rate excludes 1/2 "
                f"(tasks in a {st['order']} order, seed {st['seed']}).")
    else:
        last = seq[-1]
        text = (f"Not settled after {st['tasks_judged']} of {st['tasks_available']} tasks: the win rate of {b} over {a} "
                f"is within [{last['cs_low']:.3g}, {last['cs_high']:.3g}].")
    if len(w) >= 2:
        plan = fixed_n_equal_power(w - 0.5, bounds=(-0.5, 0.5), confidence_level=level, n_boot=200, rng=run.spec.rng,
                                   horizon=st["tasks_available"])
        if plan.get("n_fixed") is not None:
            saved = plan["n_fixed"] - len(w)
            text += (f" A fixed-n design of equal power ({plan['power']:.0%}: the sequential procedure's power at the "
                     f"observed effect over {st['tasks_available']} tasks, by 200 bootstrap sequences; paired t-test, "
                     f"statsmodels) needs {plan['n_fixed']} tasks: stopping "
                     f"{'saved' if saved >= 0 else 'cost'} {abs(saved)} tasks, about "
                     f"{abs(saved) * calls_per_task:.0f} judge calls at {calls_per_task:.0f} per task.")
        elif plan.get("note"):
            text += " " + plan["note"]
    return text


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    from evalkit._output import atomic_file, write_csv

    with atomic_file(path, force=True) as tmp:
        write_csv(frame, tmp)


def judge_transcripts(
    transcripts: list[Transcript], judge: JudgeModel, spec: JudgeSpec, out: str | os.PathLike[str], *,
    force: bool = False, cache: str | os.PathLike[str] | None = None, human: pd.DataFrame | None = None,
    human_source: str = "", progress: ProgressFn | None = None, fsync_every: int = 1, report: bool = True,
) -> JudgeResult:
    """Judge ``transcripts`` with ``judge`` into the folder ``out`` (see the module notes) and analyse.

    Parameters
    ----------
    human : DataFrame, optional
        Human labels (:func:`evalkit.report.human.read_labels`): the report then corrects the judge's
        system-level win rates with them (PPI++).
    fsync_every : int
        Group this many log lines per ``fsync`` (1: every line).
    report : bool
        Write ``DIR/report/``.
    """
    target = Path(out)
    _prepare(target, judge, spec, force)
    with VerdictLog(target / LOG_NAME, fsync_every=fsync_every, cache=cache) as log:
        run = run_judge(transcripts, judge, spec, log, progress=progress)
    frame, results = analyse(run, confidence_level=spec.confidence_level, rng=spec.rng)
    from evalkit.judge.analysis import system_frame

    cols = ["player_a", "player_b", "outcome", "weight", "item", "judge"]
    _write_csv(frame[cols + ["system_a", "system_b", "repeat"]], target / "transcript_comparisons.csv")
    sf = system_frame(frame)
    _write_csv(sf, target / "comparisons.csv")
    params: dict[str, Any] = {"judge_run": run, "confidence_level": spec.confidence_level, "seed": spec.rng}
    if human is not None:
        from evalkit.report.human import pairwise_units

        use = sf if not sf.empty else frame
        labels = human.copy()
        if not sf.empty and "player_a" in labels:  # labels may name transcripts: map them to their systems
            ids = run.transcripts
            for col in ("player_a", "player_b"):
                labels[col] = labels[col].map(lambda v: ids[v].system if v in ids else v)
        params.update(human_units=pairwise_units(use, labels), human_source=human_source,
                      human_what="win rate of each system (per task and opponent)")
    if report:
        _write_report(target, frame, results, params, spec)
    return JudgeResult(run=run, out=target, frame=frame, results=results)


def _write_report(target: Path, frame: pd.DataFrame, results: dict[str, Any], params: dict[str, Any],
                  spec: JudgeSpec) -> None:
    from evalkit.judge.sections import JUDGE_SECTIONS
    from evalkit.report import ReportSpec, write_report
    from evalkit.report.document import ReportContext

    def seed_results(ctx: ReportContext) -> None:
        ctx.results.update(results)
        return None

    record = {k: v for k, v in params.items() if k not in ("judge_run", "human_units")}
    canon = frame[["player_a", "player_b", "outcome", "weight", "item", "judge"]] if len(frame) else None
    if canon is None:
        canon = pd.DataFrame({"player_a": ["-"], "player_b": ["--"], "outcome": [0.5], "weight": [0.0]})
    rs = ReportSpec(comparisons=canon, title="evalkit judge", rng=spec.rng, confidence_level=spec.confidence_level,
                    sections=[seed_results, *JUDGE_SECTIONS], params={**params, "record": record})
    write_report(rs, target / "report", force=True)
