"""Write the Inspect AI logs of ``data/agent_runs/`` with Inspect's own writer, offline.

Two "systems" (``baseline`` and ``candidate``) each run six times over the same 24 tasks
(six families of four). Both use Inspect's ``mockllm/model`` provider, so no network is
touched; a task's pass/fail comes from a seeded table of known success probabilities
(:func:`truth`), applied by a custom scorer keyed on (system, task, run). Planted on purpose:

* task ``t01`` passes every run for both systems (deterministic);
* task ``t02`` passes with probability 0.5 for both systems (a 50 % flip rate);
* the candidate is 0.25 more likely to pass on families ``f4``-``f6``.

Each run is one ``inspect_ai.eval`` call (one ``.eval`` log, one epoch), like re-running a
benchmark. The mock model's token usage is drawn from the same seed so budgets differ.

Usage::

    python scripts/make_agent_runs.py [--out data/agent_runs] [--runs 6] [--seed 3]

The truth table is also written as ``truth.csv`` beside the logs (system, task, family,
p_pass, run, passed), so tests and readers can check what a log says against what was planted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

N_TASKS = 24
FAMILY_SIZE = 4
SYSTEMS = ("baseline", "candidate")


def truth(runs: int = 6, seed: int = 3) -> pd.DataFrame:
    """The planted outcomes: one row per (system, task, run) with the pass probability used."""
    gen = np.random.default_rng(seed)
    tasks = [f"t{i + 1:02d}" for i in range(N_TASKS)]
    family = [f"f{i // FAMILY_SIZE + 1}" for i in range(N_TASKS)]
    base = gen.uniform(0.1, 0.8, N_TASKS)
    base[0], base[1] = 1.0, 0.5  # t01 deterministic, t02 a 50 % coin
    rows = []
    for system in SYSTEMS:
        for i, task in enumerate(tasks):
            p = base[i]
            if system == "candidate" and i >= 2 and int(family[i][1:]) >= 4:
                p = min(1.0, p + 0.25)
            passed = gen.random(runs) < p
            for r in range(runs):
                rows.append((system, task, family[i], float(p), r + 1, bool(passed[r])))
    return pd.DataFrame(rows, columns=["system", "task", "family", "p_pass", "run", "passed"])


def _write_run(table: pd.DataFrame, system: str, run: int, log_dir: Path, seed: int) -> Path:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate

    outcome = {r.task: r.passed for r in table.itertuples() if r.system == system and r.run == run}
    gen = np.random.default_rng([seed, SYSTEMS.index(system), run])
    tokens = {t: (int(gen.integers(200, 2000)), int(gen.integers(20, 400))) for t in sorted(outcome)}

    def respond(messages, tools, tool_choice, config):  # noqa: ARG001 - mockllm's callable signature
        task = str(messages[-1].text).split(":")[0].split()[-1]
        inp, out = tokens[task]
        res = ModelOutput.from_content(model="mockllm/model", content=f"attempt at {task}")
        res.usage = ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out)
        return res

    @scorer(metrics=[accuracy()])
    def planted():
        async def score(state: TaskState, target: Target) -> Score:  # noqa: ARG001
            return Score(value=CORRECT if outcome[str(state.sample_id)] else INCORRECT)

        return score

    samples = [Sample(id=t, input=f"task {t}: solve it", target="pass",
                      metadata={"family": f"f{(int(t[1:]) - 1) // FAMILY_SIZE + 1}"}) for t in sorted(outcome)]
    task = Task(dataset=samples, solver=generate(), scorer=planted(), name="toy_agent_bench")
    model = get_model("mockllm/model", custom_outputs=respond)
    with tempfile.TemporaryDirectory() as tmp:
        (log,) = eval(task, model=model, log_dir=tmp, log_format="eval", display="none", epochs=1,
                      max_connections=1, metadata={"system": system, "run": run})
        if log.status != "success":
            raise RuntimeError(f"Inspect run {system}/{run} ended with status {log.status!r}: {log.error}")
        src = Path(log.location)
        dest = log_dir / system / f"run-{run}.eval"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/agent_runs")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")
    out = Path(args.out)
    table = truth(args.runs, args.seed)
    for system in SYSTEMS:
        for run in range(1, args.runs + 1):
            print(_write_run(table, system, run, out, args.seed))
    table.to_csv(out / "truth.csv", index=False)


if __name__ == "__main__":
    main()
