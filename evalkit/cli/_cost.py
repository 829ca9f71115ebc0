"""What ``compare``, ``score`` and ``summary`` (on harness logs) share about cost: the flags
``--prices`` and ``--ratio-interval``, and the cost-and-efficiency tables they print.

The numbers come from :func:`evalkit.metrics.cost.efficiency` (usage per system, per task and in
total; score per token and per dollar with delta-method or task-bootstrap-t intervals; paired
ratios candidate / baseline); this module only reads the flags and prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["add_price_arguments", "add_cost_arguments", "read_price_flag", "cost_result", "cost_tables"]

#: The usage columns shown, in this order, where the runs record them.
_SHOWN = ("tokens", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "tokens_total",
          "cost", "time")


def add_price_arguments(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--prices``: dollars per million tokens per model, for logs that record tokens but no cost."""
    p.add_argument("--prices", default=None, metavar="FILE",
                   help="price table: model,input,output[,cache_read,cache_write] in dollars per million tokens "
                        "(CSV/JSON/JSONL/Parquet, or JSON {model: {input: 3, output: 15}}); prices each run's tokens "
                        "by its model (else its system name) into a cost column")


def add_cost_arguments(p: argparse.ArgumentParser, *, resampling: bool = False) -> None:
    """``--prices`` and ``--ratio-interval`` (and, with ``resampling``, ``--n-resamples`` / ``--rng`` of the
    task bootstrap, for commands that have none of their own)."""
    g = p.add_argument_group("cost and efficiency (score per token and per dollar)")
    add_price_arguments(g)
    g.add_argument("--ratio-interval", choices=["delta", "bootstrap"], default="delta",
                   help="interval of score per token / per dollar and of the paired ratios: delta (default; "
                        "log-scale delta method, t over tasks) or bootstrap (task bootstrap-t, studentized)")
    if resampling:
        g.add_argument("--n-resamples", type=int, default=None,
                       help="--ratio-interval bootstrap: task resamples (default 2000)")
        g.add_argument("--rng", type=int, default=None, metavar="SEED",
                       help="--ratio-interval bootstrap: seed of the task resamples (default 0)")


def read_price_flag(path: str) -> Any:
    """The price table of ``--prices``; its errors (file, line, column, found, allowed) name the flag."""
    from evalkit.metrics.cost import read_prices

    try:
        return read_prices(path)
    except (ValueError, OSError) as exc:
        text = str(exc) if isinstance(exc, ValueError) else f"{path}: cannot read the file ({exc.strerror or exc})."
        raise ValueError(f"{text} Fix the price table given to --prices (one row per model: model, input, output"
                         "[, cache_read, cache_write], dollars per million tokens).") from None


def cost_result(args: argparse.Namespace, outcomes: Any, pairs: Sequence[tuple[str, str]] = ()) -> tuple[Any, Any]:
    """``(outcomes with a priced cost, EfficiencyResult or None)``: None when the runs record no tokens or cost.

    ``pairs`` are ``(baseline, candidate)``: their ratios are candidate / baseline."""
    from evalkit.metrics.cost import available_usage, efficiency, with_usage

    prices = getattr(args, "prices", None)
    table = read_price_flag(prices) if prices else None
    if table is not None:
        try:
            outcomes = with_usage(outcomes, table)
        except ValueError as exc:
            raise ValueError(f"--prices {prices}: {exc}") from None
    else:
        outcomes = with_usage(outcomes)
    if not [c for c in available_usage(outcomes) if c != "time"]:
        return outcomes, None
    result = efficiency(outcomes, method=getattr(args, "ratio_interval", "delta"), pairs=list(pairs),
                        confidence_level=getattr(args, "confidence_level", 0.95),
                        n_resamples=_given(args, "n_resamples", 2000), rng=_given(args, "rng", 0))
    notes = list(outcomes.attrs.get("notes", [])) if table is not None else []
    if notes:
        from dataclasses import replace

        result = replace(result, notes=tuple(notes))
    return outcomes, result


def cost_tables(result: Any, order: Sequence[str] | None = None) -> dict[str, tuple[str, Any]]:
    """``{json key: (title, table)}``: usage (per task and in total), efficiency, and the paired ratios."""
    import pandas as pd

    from evalkit.metrics.cost import _unit_name

    level = f"{100 * result.confidence_level:g}%"
    usage = result.usage
    rows = []
    for r in usage.to_dict("records"):
        for c in _SHOWN:
            if f"{c}_sum" not in r or pd.isna(r[f"{c}_sum"]) or (c.startswith("cache") and not r[f"{c}_sum"]):
                continue
            # usage_table's "tokens_total" is the total of tokens, "tokens_total_total" that of tokens_total
            if c == "tokens_total" and r[f"{c}_sum"] == r.get("tokens_sum"):  # no cache tokens: same as tokens
                continue
            rows.append({"system": r["system"], "usage": c, "total": r[f"{c}_sum"],
                         "mean per task": r[f"{c}_per_task"], "runs without it": r[f"{c}_missing"],
                         "tasks": r["n_tasks"], "runs": r["n_runs"]})
    spend = pd.DataFrame(rows, columns=["system", "usage", "total", "mean per task", "runs without it", "tasks", "runs"])
    if order is not None and len(spend):
        rank = {s: i for i, s in enumerate(order)}
        spend = spend.sort_values("system", key=lambda s: s.map(rank), kind="stable").reset_index(drop=True)
    method = result.table["method"].iat[0] if len(result.table) else result.method
    eff = result.table.assign(per=[f"score per {_unit_name(c)}" for c in result.table["per"]])
    eff = eff[["system", "per", "efficiency", "ci_low", "ci_high", "n_tasks", "score_per_task", "note"]].rename(
        columns={"score_per_task": "mean score"})
    out = {"usage": ("what each system spent (tokens, dollars, seconds): in total and mean per task (a task's "
                     "runs averaged first)", spend),
           "efficiency": (f"score per unit spent: sum of task mean scores / sum of task mean usage ({level} interval: "
                          f"{method})", eff)}
    if len(result.pairs):
        pairs = result.pairs.assign(per=[f"score per {_unit_name(c)}" for c in result.pairs["per"]])
        pairs = pairs[["baseline", "candidate", "per", "ratio", "ci_low", "ci_high", "n_tasks", "note"]].rename(
            columns={"ratio": "ratio (candidate / baseline)"})
        out["efficiency_pairs"] = (f"paired efficiency over shared tasks: candidate / baseline ({level} interval: "
                                   f"{method})", pairs)
    return out


def _given(args: argparse.Namespace, name: str, default: int) -> int:
    """The flag's value, or its default where the command leaves it unset (None)."""
    value = getattr(args, name, None)
    return default if value is None else int(value)
