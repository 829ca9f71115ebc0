"""Reports: comparison logs and/or per-item scores in, a self-contained Markdown + HTML folder out.

:func:`write_report` (``write_report(ReportSpec(...), out, force=False, progress=None)``) runs a
list of section builders (``ReportContext -> Section | None``); add your own with
``extra_sections=`` (see :mod:`evalkit.report.sections`). Escaping is the renderers' job: wrap
a value from the data in :func:`plain` inside a ``Text`` and it is shown literally.
"""

from evalkit.report.document import (
    Bullets,
    Figure,
    ReportContext,
    Section,
    Table,
    Text,
    plain,
)
from evalkit.report.render import render_html, render_markdown
from evalkit.report.sections import (
    DEFAULT_SECTIONS,
    head_to_head_section,
    inputs_section,
    leaderboard_section,
    methods_section,
    pairwise_section,
    unit_section,
    win_rate_section,
)
from evalkit.report.write import ReportSpec, SectionBuilder, build_report, read_scores, write_report

__all__ = [
    "write_report", "ReportSpec", "build_report", "read_scores", "SectionBuilder", "DEFAULT_SECTIONS", "plain",
    "ReportContext", "Section", "Text", "Bullets", "Table", "Figure", "render_markdown", "render_html",
    "inputs_section", "leaderboard_section", "win_rate_section", "head_to_head_section", "pairwise_section",
    "unit_section",
    "methods_section",
]
