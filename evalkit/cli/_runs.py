"""What ``score`` and ``compare`` share: reading RUNs into one outcome per (system, task, run), naming
the systems, scoring single runs, and the tables both print (the sign convention lives here).

Naming rule (every command that reads RUNs): a RUN's system takes the model name its logs give
(Inspect's ``eval.model``, lm-eval's ``model_name``, mini-swe-agent's model, MT-bench's ``model``),
else the RUN's file or folder name; ``--names`` overrides; two RUNs with the same name are told
apart by their path (``mockllm/model (baseline)``). One RUN holding several models is split by model.

Sign convention: ``compare BASELINE CANDIDATE`` reports candidate - baseline (second minus first),
and every table says so in its header.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["read_runs", "print_scores", "labelled_pairs", "DIFF_LABEL", "add_score_arguments"]

DIFF_LABEL = "diff (candidate − baseline)"  # the same header as evalkit.report.tasks.DIFF_LABEL


def read_runs(args: argparse.Namespace, runs: Sequence[str], *, by: str | None, cluster: str | None = None,
              allow_single: bool = True) -> tuple[Any, dict, list[str]]:
    """One row per (system, task, run) with its final score and spend, what the reader counted, and the
    systems in RUN order."""
    from evalkit.cli._logs import read_log_inputs
    from evalkit.io.logs import (  # pandas: when the command runs, not at --help
        run_names,
        session_outcomes,
    )

    meta = tuple(c for c in (cluster, by) if c and c not in ("system", "input", "epoch"))
    traces = read_log_inputs(args, list(runs), metadata=meta)
    split = by
    if split is None and len(runs) == 1 and traces["system"].nunique() > 1:
        split = "system"  # one RUN holding several models: one system per model
    key = split or "input"
    if key not in traces.columns:
        extra = [c for c in traces.columns if c not in ("task", "session", "budget", "score", "source", "line")]
        raise ValueError(f"--by {key!r} names no column of the logs; they have {extra}.")
    outcomes = session_outcomes(traces, by=list(dict.fromkeys(c for c in (key, cluster, "input") if c)))
    if outcomes[key].isna().any():
        n = int(outcomes[key].isna().sum())
        raise ValueError(f"--by {key!r} is missing for {n} of {len(outcomes)} runs of tasks (no such column or sample "
                         f"metadata field there); the logs have {[c for c in traces.columns if c != 'input']}.")
    outcomes["logged_system"] = outcomes["system"].astype(str)
    if split:
        outcomes["system"] = outcomes[key].astype(str)
        order = list(dict.fromkeys(outcomes["system"]))
    else:
        names = run_names(outcomes, runs, getattr(args, "names", None), what="--names")
        outcomes["system"] = outcomes["input"].map(names)
        order = [names[r] for r in runs]
    read = {"files": traces.attrs.get("files", {}), "skipped": traces.attrs.get("skipped", []),
            "unscored": traces.attrs.get("unscored", []), "notes": traces.attrs.get("notes", []),
            "reported": traces.attrs.get("reported", [])}
    if not allow_single and outcomes["system"].nunique() < 2:
        raise ValueError(f"The logs hold a single system ({outcomes['system'].iat[0]!r}); give two RUNs or a --by "
                         "column with several values, or score it alone with `evalkit score`.")
    return outcomes, read, order


def _reported_text(entries: list[dict]) -> str:
    """The harness's own headline of a system, as one short text (empty when none or several disagree)."""
    texts = []
    for e in entries:
        if e.get("format") == "inspect":
            for scorer, m in (e.get("scores") or {}).items():
                parts = ", ".join(f"{k} {v:.6g}" for k, v in m.items())
                texts.append(f"Inspect {scorer}: {parts}")
        elif e.get("format") == "lm_eval" and "value" in e:
            se = f" ± {e['stderr']:.6g}" if "stderr" in e else ""
            texts.append(f"lm-eval {e.get('task')} {e.get('metric')}: {e['value']:.6g}{se}")
        elif e.get("format") == "swe_bench":
            r, t = e.get("resolved", e.get("passed")), e.get("total")
            rate = f" ({r / t:.4g})" if isinstance(r, (int, float)) and isinstance(t, (int, float)) and t else ""
            texts.append(f"SWE-bench resolved {r}" + (f" of {t}{rate}" if t else ""))
    texts = list(dict.fromkeys(texts))
    if len(entries) > 1:  # one headline per log: give their range, not a list
        values = [v for e in entries for m in (e.get("scores") or {}).values() for k, v in m.items() if k == "accuracy"]
        values += [e["value"] for e in entries if "value" in e]
        if values:
            return f"{len(entries)} logs, each its own headline: {min(values):.6g} to {max(values):.6g}"
        return f"{len(entries)} logs"
    return "; ".join(texts)


def print_scores(args: argparse.Namespace, outcomes: Any, read: dict, order: Sequence[str], *,
                 cluster: str | None, title: str = "score of each run", before: tuple[str, Any] | None = None,
                 after: dict[str, tuple[str, Any]] | None = None) -> Any:
    """Score each system alone (:func:`evalkit.stats.score.score_runs`) and print the table (after the
    ``before`` table, e.g. compare's pairs: ``(title, table)``, and before the ``after`` tables, e.g. cost and
    efficiency: ``{json key: (title, table)}``), as one result (one JSON object with --json)."""
    from evalkit.stats.score import score_runs

    res = score_runs(outcomes, cluster=cluster, confidence_level=args.confidence_level,
                     threshold=getattr(args, "pass_threshold", None))
    table = res.table.set_index("system").loc[list(order)].reset_index()
    by_system: dict[str, list[dict]] = {}
    if {"input", "logged_system"} <= set(outcomes.columns):  # a report applies to the system its file's rows went to
        logged = zip(outcomes["input"], outcomes["logged_system"], strict=True)
        where = dict(zip(logged, outcomes["system"], strict=True))
        for e in read.get("reported") or []:
            sysname = where.get((e.get("input"), str(e.get("system"))))
            if sysname is not None:
                by_system.setdefault(str(sysname), []).append(e)
    table["reported by the harness"] = [_reported_text(by_system.get(s, [])) for s in table["system"]]
    absent = {c for c in ("tokens", "cost", "time") if c in table.columns and table[c].isna().all()}
    shown = [c for c in table.columns if not c.endswith("_per_run") and c not in absent
             and not (c.endswith("_missing") and (not table[c].any() or c.removesuffix("_missing") in absent))
             and not (c == "reported by the harness" and not table[c].astype(bool).any())]
    table = table[shown]
    level = f"{args.confidence_level:.0%}"
    titled: dict[str, Any] = {}
    keys: dict[str, Any] = {}
    if before is not None:
        titled[before[0]] = keys["pairs"] = before[1]
    titled[f"{title} (mean over tasks; se = sd / sqrt(n tasks); {level} interval: Wilson for one pass/fail run per "
           "task, else t or CR1 clustered)"] = keys["scores"] = table
    if res.pass_k is not None and len(res.pass_k):
        titled["pass@k and pass^k (unbiased, averaged over tasks with at least k runs)"] = keys["pass_k"] = res.pass_k
    for key, (t, tab) in (after or {}).items():
        titled[t] = keys[key] = tab
    if args.ui.json:
        args.ui.result(keys if len(keys) > 1 else table)
    else:
        args.ui.result(titled, floatfmt=".6g")
    return res


def labelled_pairs(table: Any) -> Any:
    """The pair table with candidate and baseline named (see :func:`evalkit.report.tasks.labelled_pairs`)."""
    from evalkit.report.tasks import labelled_pairs as _labelled

    return _labelled(table)


def add_score_arguments(p: argparse.ArgumentParser) -> None:
    """Flags shared by ``score`` and ``compare``."""
    p.add_argument("--by", default=None, metavar="COLUMN",
                   help="split the logs into systems by this column instead of by RUN: 'system' (as logged), "
                        "'epoch', or a metadata field")
    p.add_argument("--names", default=None, metavar="A,B,...",
                   help="system names for the RUNs (default: the model named in each RUN's logs, else its file "
                        "or folder name; two RUNs of one model are told apart by their path)")
    p.add_argument("--cluster", default=None, metavar="FIELD",
                   help="task cluster for the clustered SE (a sample metadata field, doc field or event field)")
    p.add_argument("--cluster-regex", default=None, metavar="REGEX",
                   help="task cluster from the task id: the first group of REGEX, e.g. '^(.+)-[0-9]+$' for "
                        "SWE-bench repositories")
    from evalkit.cli._flags import add_confidence_level

    add_confidence_level(p, "--confidence")
    p.add_argument("--pass-threshold", type=float, default=None, metavar="T",
                   help="pass@k and reliability: a run passes when its score >= T (default: scores must be 0/1)")


def clusters_from_ids(tasks: Any, regex: str) -> Any:
    """The cluster of each task id: the first group ``regex`` captures."""
    import re

    import pandas as pd

    from evalkit._errors import list_ids

    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise ValueError(f"--cluster-regex {regex!r} is not a regular expression: {exc}.") from None
    if pattern.groups < 1:
        raise ValueError(f"--cluster-regex {regex!r} needs a group: the cluster is the text it captures.")
    found = tasks.str.extract(pattern, expand=False)
    found = found.iloc[:, 0] if isinstance(found, pd.DataFrame) else found
    if found.isna().any():
        bad = sorted(set(tasks[found.isna()]))
        raise ValueError(f"--cluster-regex {regex!r} matches no cluster in {len(bad)} task id(s): "
                         f"{list_ids(bad)}.")
    return found


def apply_cluster(args: argparse.Namespace, outcomes: Any) -> str | None:
    """The cluster column of the outcomes (``--cluster`` or ``--cluster-regex``), added when needed."""
    if args.cluster_regex:
        if args.cluster:
            raise ValueError("Give --cluster FIELD or --cluster-regex REGEX, not both.")
        outcomes["cluster"] = clusters_from_ids(outcomes["task"], args.cluster_regex)
        return "cluster"
    return args.cluster


#: What each harness-log format is, for the one-line redirections of the judgment-log commands.
_HARNESS_NAMES = {"inspect": "an Inspect log", "swe_agent": "a SWE-agent trajectory",
                  "mini_swe_agent": "a mini-swe-agent trajectory", "swe_bench": "a SWE-bench verdict file",
                  "lm_eval": "lm-eval samples", "mt_bench_single": "MT-bench single-answer judgments",
                  "lm_eval_results": "an lm-eval results file"}


def _harness_kind(path: Path) -> str | None:
    """A harness log's format from its name and first bytes, with the standard library only (``rate``'s fast
    path must not import pandas); None for anything else, judgment logs and tables included."""
    import json
    import re
    import zipfile

    name = path.name.lower()
    if name.endswith(".eval"):
        return "inspect" if zipfile.is_zipfile(path) else None
    if name.endswith(".traj.json"):
        return "mini_swe_agent"
    if name.endswith(".traj"):
        return "swe_agent"
    if not name.endswith((".json", ".jsonl", ".jsonl.gz", ".ndjson")):
        return None
    if re.match(r"^samples_.+_\d{4}-\d{2}-\d{2}T[0-9\-.:]+\.jsonl$", path.name):
        return "lm_eval"
    if re.match(r"^results_\d{4}-\d{2}-\d{2}T[0-9\-.:]+\.json$", path.name):
        return "lm_eval_results"
    from evalkit.io.formats import read_head

    head = read_head(path, 1 << 16)
    if name.endswith(".json"):
        if re.match(rb'^\s*\{\s*"version"\s*:', head) and b'"eval"' in head[:4096]:
            return "inspect"
        if b'"trajectory_format"' in head and b"mini-swe-agent" in head:
            return "mini_swe_agent"
        if b'"resolved_ids"' in head or path.name in ("results_summary.json", "eval_results.json", "report.json"):
            return "swe_bench"
        return None
    try:
        rec = json.loads(next((ln for ln in head.splitlines() if ln.strip()), b"{}"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # deep JSON: not a log (the reader says why)
        return None
    if isinstance(rec, dict) and "doc_id" in rec and ("resps" in rec or "metrics" in rec):
        return "lm_eval"
    if isinstance(rec, dict) and {"question_id", "model", "score", "turn"} <= rec.keys() and "model_1" not in rec:
        return "mt_bench_single"
    return None


def not_a_judgment_log(paths: Sequence[str], command: str) -> None:
    """Raise the one-line error naming the commands that read harness logs, when an input is one (a file, or
    a folder holding only harness logs)."""
    for spec in paths:
        p = Path(spec)
        files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())[:200] if p.is_dir() else []
        kinds = [_harness_kind(f) for f in files]
        found = [k for k in kinds if k]
        if found and (p.is_file() or len(found) == len(kinds)):
            raise ValueError(f"{spec} is {_HARNESS_NAMES.get(found[0], 'a harness log')} (runs of tasks), not pairwise "
                             f"judgments that `evalkit {command}` rates: score it with `evalkit score {spec}`, compare "
                             "runs with `evalkit compare BASELINE CANDIDATE`, or draw Elo per budget with "
                             "`evalkit curve` / `evalkit report --traces`.")


def is_harness_log(paths: Sequence[str]) -> bool:
    """Whether every input is a harness log of runs (``summary`` then scores them as ``score`` does)."""
    try:
        not_a_judgment_log(paths, "summary")
    except ValueError:
        return True
    return False
