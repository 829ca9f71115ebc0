"""Run a judge over the pairs of transcripts of each task: selection, budget, concurrency, retries,
the crash-safe log and resuming, and stopping once the system-level answer has settled.

:func:`run_judge` takes the transcripts (:func:`evalkit.judge.transcripts.read_transcripts`), a judge
(:func:`evalkit.judge.models.resolve_judge`) and a :class:`JudgeSpec`, and returns a
:class:`JudgeRun` holding every record of the verdict log it used. Tasks are judged one after the
other (in a seeded random order by default); within a task, a policy (:mod:`evalkit.judge.pairs`)
proposes a batch of pairs, every pair is judged in both orders, the calls of a batch run
concurrently (at most ``concurrency`` at once), each retried with exponential back-off, and each
answer is logged before anything else uses it. A second run into the same log replays the same
decisions, reusing every logged answer, and calls the judge only for what is missing.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from evalkit._progress import ProgressFn, tick
from evalkit.judge.log import VerdictLog, call_key
from evalkit.judge.models import JudgeModel
from evalkit.judge.pairs import POLICIES, make_policy
from evalkit.judge.prompt import Prompt, parse_verdict
from evalkit.judge.transcripts import Transcript

__all__ = ["JudgeSpec", "JudgeRun", "run_judge", "group_tasks", "MAX_ANSWER_CHARS"]

#: The raw answer kept in the log (the parser reads the whole answer first).
MAX_ANSWER_CHARS = 20_000


@dataclass(frozen=True)
class JudgeSpec:
    """How to judge.

    Attributes
    ----------
    prompt : Prompt
    pairs : {"all", "swiss", "active"}
    top_k : int, optional
        The size of the set to identify per task (``--pairs active``; the top-k statement of every
        policy). Default: 15 for tasks of 16 or more transcripts (seed 002), else about half.
    budget : int, optional
        Judge calls in total (logged answers of an earlier run count), split evenly over the tasks.
    both_orders : bool
        Judge each pair as (x, y) and (y, x) (default), so position bias is measured and cancelled.
    concurrency : int
        Judge calls in flight at once.
    retries, retry_delay : int, float
        A failed call is retried ``retries`` times, waiting ``retry_delay * 2**attempt`` seconds.
    rng : int
        Seed of the task order, the pair order and the active policy's warm-up.
    task_order : {"random", "file"}
    stop_when_settled : bool
        Stop judging new tasks once the betting confidence sequence on the per-task win rate of
        ``systems[1]`` over ``systems[0]`` excludes 1/2.
    systems : (str, str), optional
        The two systems of ``stop_when_settled`` (default: the first two systems read).
    confidence_level : float
    settle : float
        The active policy stops a task when every membership probability is beyond this.
    max_repeats : int
        How often the active policy may judge the same pair (1: never again; a judge that answers the
        same prompt differently from call to call, at temperature > 0, can be asked again).
    """

    prompt: Prompt = field(default_factory=Prompt)
    pairs: str = "all"
    top_k: int | None = None
    budget: int | None = None
    both_orders: bool = True
    concurrency: int = 8
    retries: int = 3
    retry_delay: float = 1.0
    rng: int = 0
    task_order: str = "random"
    stop_when_settled: bool = False
    systems: tuple[str, str] | None = None
    confidence_level: float = 0.95
    settle: float = 0.99
    max_repeats: int = 1

    def __post_init__(self) -> None:
        if self.pairs not in POLICIES:
            raise ValueError(f"pairs must be one of {POLICIES}; got {self.pairs!r}.")
        if self.budget is not None and self.budget < 1:
            raise ValueError(f"budget must be a positive number of judge calls; got {self.budget}.")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1; got {self.concurrency}.")
        if self.task_order not in ("random", "file"):
            raise ValueError(f"task_order must be 'random' or 'file'; got {self.task_order!r}.")
        if self.max_repeats < 1:
            raise ValueError(f"max_repeats must be at least 1; got {self.max_repeats}.")

    def k_for(self, n: int) -> int | None:
        """The top-k of a task with ``n`` transcripts (None when ``n`` < 2)."""
        if n < 2:
            return None
        k = self.top_k if self.top_k is not None else (15 if n >= 16 else max(1, n // 2))
        return min(max(1, k), n - 1)


@dataclass
class JudgeRun:
    """What a run did: every record it used (in call order), and its accounting."""

    records: list[dict[str, Any]]
    transcripts: dict[str, Transcript]
    tasks: list[str]
    task_order: list[str]
    judge: str
    spec: JudgeSpec
    calls_made: int = 0
    reused: int = 0
    cached: int = 0
    errors: int = 0
    unparseable: int = 0
    skipped_tasks: list[str] = field(default_factory=list)
    settled: dict[str, Any] = field(default_factory=dict)
    calls_per_task: dict[str, int] = field(default_factory=dict)
    log_duplicates: int = 0
    log_dropped_bytes: int = 0


def group_tasks(transcripts: Sequence[Transcript]) -> dict[str, list[Transcript]]:
    """Transcripts by task, in file order."""
    out: dict[str, list[Transcript]] = {}
    for t in transcripts:
        out.setdefault(t.task, []).append(t)
    return out


def _task_sha(task: str, text: str) -> str:
    return hashlib.sha256(f"{task}\n{text}".encode()).hexdigest()


class _Caller:
    """Sends calls to the judge: concurrency limit, retries with back-off, logging each answer."""

    def __init__(self, judge: JudgeModel, spec: JudgeSpec, log: VerdictLog, run: JudgeRun,
                 progress: ProgressFn | None, total: int | None) -> None:
        self.judge, self.spec, self.log, self.run = judge, spec, log, run
        self.sem = asyncio.Semaphore(spec.concurrency)
        self.progress, self.total = progress, total
        self.done = 0

    async def _ask(self, prompt: str) -> tuple[str | None, str, int]:
        err = ""
        for attempt in range(self.spec.retries + 1):
            try:
                return await self.judge.ask(prompt), "", attempt + 1
            except Exception as exc:  # any failure of the judge (network, rate limit, a bug in a callable)
                err = f"{type(exc).__name__}: {exc}"
                if attempt < self.spec.retries:
                    await asyncio.sleep(self.spec.retry_delay * 2**attempt)
        return None, err, self.spec.retries + 1

    async def call(self, meta: dict[str, Any], prompt: str) -> dict[str, Any]:
        async with self.sem:
            answer, err, attempts = await self._ask(prompt)
        verdict = "error" if answer is None else {"A": "first", "B": "second", "tie": "tie", None: "unparseable"}[
            parse_verdict(answer)]
        rec = {**meta, "verdict": verdict, "answer": None if answer is None else answer[:MAX_ANSWER_CHARS],
               "error": err or None, "attempts": attempts,
               "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        self.log.append(rec)
        self.run.calls_made += 1
        self.run.errors += verdict == "error"
        self.run.unparseable += verdict == "unparseable"
        self.done += 1
        tick(self.progress, "judge calls", self.done + self.run.reused + self.run.cached, self.total)
        return rec


def _score(rec: dict[str, Any], first_is_i: bool) -> float | None:
    v = rec["verdict"]
    s = {"first": 1.0, "second": 0.0, "tie": 0.5}.get(v)
    if s is None:
        return None
    return s if first_is_i else 1.0 - s


async def _judge_task(task: str, items: list[Transcript], spec: JudgeSpec, judge: JudgeModel, log: VerdictLog,
                      caller: _Caller, run: JudgeRun, budget: int | None, seed: np.random.SeedSequence) -> int:
    n = len(items)
    k = spec.k_for(n)
    gen = np.random.default_rng(seed)
    per_pair = 2 if spec.both_orders else 1
    policy = make_policy(spec.pairs, n, k=k, rng=gen, calls_per_pair=per_pair, settle=spec.settle,
                         max_repeats=spec.max_repeats)
    task_text = next((t.task_text for t in items if t.task_text), "") or task
    tsha = _task_sha(task, task_text)
    results: dict[tuple[int, int], list[float]] = {}
    counts: dict[tuple[int, int], int] = {}
    used = 0
    attempted: set[tuple[int, int]] = set()
    batch_size = max(1, spec.concurrency // per_pair)
    while budget is None or used + per_pair <= budget:
        batch = policy.next_batch(results, batch_size)
        if not batch:
            break
        if budget is not None:
            batch = batch[: (budget - used) // per_pair]
        if batch and all(p in attempted for p in batch):
            break  # the policy asks again only for pairs whose calls failed or were unparseable: never loop on them
        attempted.update(batch)
        coros, metas = [], []
        for i, j in batch:
            repeat = counts.get((i, j), 0)
            counts[(i, j)] = repeat + 1
            orders = [(i, j), (j, i)] if spec.both_orders else [(i, j) if gen.random() < 0.5 else (j, i)]
            for a, b in orders:
                ta, tb = items[a], items[b]
                key = call_key(ta.sha256, tb.sha256, tsha, spec.prompt.sha256, judge.name, repeat)
                meta = {"key": key, "task": task, "first": ta.id, "second": tb.id, "first_system": ta.system,
                        "second_system": tb.system, "first_sha": ta.sha256, "second_sha": tb.sha256,
                        "task_sha": tsha, "prompt_sha": spec.prompt.sha256, "judge": judge.name, "repeat": repeat,
                        "policy": spec.pairs}
                metas.append(((i, j), a == i, meta))
                hit = log.get(key)
                if hit is not None:
                    if hit.get("cached") and key not in log.records:
                        log.append({**{k: v for k, v in hit.items() if k != "cached"}, **meta, "from_cache": True})
                        run.cached += 1
                    else:
                        run.reused += 1
                    coros.append(_done(hit))
                else:
                    coros.append(caller.call(meta, spec.prompt.render(task_text, ta.text, tb.text)))
        recs = await asyncio.gather(*coros)
        for ((i, j), first_is_i, _), rec in zip(metas, recs, strict=True):
            run.records.append(rec)
            results.setdefault((i, j), [])  # judged, even when the verdict was an error or unparseable
            s = _score(rec, first_is_i)
            if s is not None:
                results.setdefault((i, j), []).append(s)
        used += len(recs)
    return used


async def _done(rec: dict[str, Any]) -> dict[str, Any]:
    return rec


def _task_win(records: list[dict[str, Any]], a: str, b: str) -> float | None:
    """The mean score of system ``b`` against ``a`` over a task's decisive or tied verdicts."""
    vals = []
    for r in records:
        s = {"first": 1.0, "second": 0.0, "tie": 0.5}.get(r["verdict"])
        if s is None:
            continue
        if (r["first_system"], r["second_system"]) == (b, a):
            vals.append(s)
        elif (r["first_system"], r["second_system"]) == (a, b):
            vals.append(1.0 - s)
    return float(np.mean(vals)) if vals else None


async def _run(transcripts: Sequence[Transcript], judge: JudgeModel, spec: JudgeSpec, log: VerdictLog,
               progress: ProgressFn | None) -> JudgeRun:
    from evalkit.stats.sequential import BettingCS

    by_task = group_tasks(transcripts)
    tasks = list(by_task)
    judgeable = [t for t in tasks if len(by_task[t]) >= 2]
    children = np.random.SeedSequence(spec.rng).spawn(len(tasks) + 1)
    order = list(judgeable)
    if spec.task_order == "random":
        perm = np.random.default_rng(children[-1]).permutation(len(order))
        order = [order[i] for i in perm]
    run = JudgeRun(records=[], transcripts={t.id: t for t in transcripts}, tasks=tasks, task_order=order,
                   judge=judge.name, spec=spec, skipped_tasks=[t for t in tasks if len(by_task[t]) < 2],
                   log_duplicates=log.duplicates, log_dropped_bytes=log.dropped_bytes)
    per_pair = 2 if spec.both_orders else 1
    full = {t: len(by_task[t]) * (len(by_task[t]) - 1) // 2 * per_pair for t in order}
    budgets: dict[str, int | None] = {t: None for t in order}
    if spec.budget is not None:
        base, extra = divmod(spec.budget, max(1, len(order)))
        budgets = {t: base + (1 if r < extra else 0) for r, t in enumerate(order)}
    total = sum(min(full[t], budgets[t] or full[t]) for t in order) if spec.pairs != "active" or spec.budget else None
    caller = _Caller(judge, spec, log, run, progress, total)
    systems = spec.systems
    if spec.stop_when_settled:
        names = list(dict.fromkeys(t.system for t in transcripts))
        systems = systems or (tuple(names[:2]) if len(names) >= 2 else None)  # type: ignore[assignment]
        if systems is None or len(set(systems)) < 2 or not set(systems) <= set(names):
            raise ValueError(f"--stop-when-settled compares two systems; the transcripts hold {names}"
                             + (f", not {list(systems)}" if systems else "") + ".")
    cs = BettingCS.start(confidence_level=spec.confidence_level) if spec.stop_when_settled else None
    sequence: list[dict[str, Any]] = []
    index = {t: k for k, t in enumerate(tasks)}
    t0 = time.perf_counter()
    for pos, task in enumerate(order):
        start = len(run.records)
        used = await _judge_task(task, by_task[task], spec, judge, log, caller, run, budgets[task],
                                 children[index[task]])
        run.calls_per_task[task] = used
        if cs is not None and systems is not None:
            w = _task_win(run.records[start:], systems[0], systems[1])
            if w is None:
                continue
            path = cs.update([w])
            sequence.append({"task": task, "position": pos + 1, "win_rate": w, "cs_low": float(path["lower"][0]),
                             "cs_high": float(path["upper"][0]), "calls": sum(run.calls_per_task.values())})
            if cs.lower > 0.5 or cs.upper < 0.5:
                run.settled = {"task": task, "tasks_judged": pos + 1, "tasks_in_sequence": len(sequence),
                               "direction": f"{systems[1]} > {systems[0]}" if cs.lower > 0.5 else
                               f"{systems[1]} < {systems[0]}", "calls": sum(run.calls_per_task.values())}
                break
    if cs is not None:
        run.settled.setdefault("tasks_judged", len(run.calls_per_task))
        run.settled.update(sequence=sequence, systems=list(systems or ()), tasks_available=len(order),
                           seed=spec.rng, order=spec.task_order)
    run.settled["elapsed_s"] = time.perf_counter() - t0
    return run


def run_judge(transcripts: Sequence[Transcript], judge: JudgeModel, spec: JudgeSpec, log: VerdictLog, *,
              progress: ProgressFn | None = None) -> JudgeRun:
    """Judge the transcripts' pairs task by task (see the module notes); answers go to ``log``.

    Returns
    -------
    JudgeRun
        ``records`` in call order (logged answers reused, fresh ones appended), ``calls_made`` (fresh
        judge calls this run), ``reused`` (answers already in the log), ``cached`` (from the shared cache),
        ``settled`` (``stop_when_settled``: where and how the answer settled, and the sequence).
    """
    if spec.task_order == "file" and spec.stop_when_settled:
        import warnings

        warnings.warn("--task-order file with --stop-when-settled: the confidence sequence assumes the tasks come "
                      "in an order independent of their outcomes, and files are often sorted (by source, "
                      "difficulty or date); shuffle them with a recorded seed (the default, --task-order random).",
                      UserWarning, stacklevel=2)
    return asyncio.run(_run(transcripts, judge, spec, log, progress))
