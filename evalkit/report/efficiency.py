"""Report section of ``evalkit compare``: what each system spent (tokens, dollars, seconds; per task and in
total), its score per token and per dollar with intervals, and the paired ratios candidate / baseline.

The numbers are :func:`evalkit.metrics.cost.efficiency`'s, computed once by the command and passed as
``ctx.params["efficiency_tables"]`` (``{key: (title, table)}``, see :func:`evalkit.cli._cost.cost_tables`)
with ``ctx.params["efficiency_notes"]`` (what pricing assumed).
"""

from __future__ import annotations

from typing import Any

from evalkit.report.document import Bullets, ReportContext, Section, Table, Text, plain

__all__ = ["efficiency_section"]

_CSV = {"usage": "tables/usage.csv", "efficiency": "tables/efficiency.csv",
        "efficiency_pairs": "tables/efficiency_pairs.csv"}


def efficiency_section(ctx: ReportContext) -> Section | None:
    """Usage, efficiency and paired efficiency ratios, when the runs record tokens or cost."""
    tables = ctx.params.get("efficiency_tables")
    if not tables:
        return None
    source = ctx.params.get("prices")
    blocks: list[Any] = [Text(
        "Efficiency of a system is the ratio estimator sum over tasks of the mean score / sum over tasks of the "
        "mean usage (for pass/fail scores: solved tasks per dollar or per million tokens); a paired ratio is the "
        "candidate's efficiency over the baseline's on their shared tasks (candidate / baseline: above 1, the "
        "candidate gets more score per unit spent). Tasks are the independent units. "
        + (f"Cost is priced from the logs' token counts with the price table {plain(source)} (dollars per million "
           "input, output and cache tokens per model)." if source else "Cost, where shown, is the logs' own."))]
    for key, (title, table) in tables.items():
        blocks.append(Text(f"**{title}**"))
        blocks.append(Table(table, floatfmt=".4g", csv=_CSV.get(key, f"tables/{key}.csv")))
    notes = [str(n) for n in ctx.params.get("efficiency_notes") or ()]
    sentences = [str(s) for s in ctx.params.get("efficiency_sentences") or ()]
    if sentences or notes:
        blocks.append(Bullets(tuple(sentences + notes)))
    return Section("Cost and efficiency", tuple(blocks))
