"""Reports: comparison logs and/or per-item scores in, a self-contained Markdown + HTML folder out.

:func:`write_report` (``write_report(ReportSpec(...), out, force=False, progress=None)``) runs a
list of section builders (``ReportContext -> Section | None``); add your own with
``extra_sections=`` (see :mod:`evalkit.report.sections`). Escaping is the renderers' job: wrap
a value from the data in :func:`plain` inside a ``Text`` and it is shown literally.
"""

from evalkit._lazy import lazy_exports

# name -> module; loaded on first use, so that `evalkit rate` can print a headline
# (evalkit.report.findings) without importing pandas, the renderers or the sections
_EXPORTS = {
    "Bullets": "document", "Figure": "document", "ReportContext": "document", "Section": "document",
    "Table": "document", "Text": "document", "plain": "document",
    "Headline": "headline", "Finding": "headline",
    "render_html": "render", "render_markdown": "render",
    "DEFAULT_SECTIONS": "sections", "head_to_head_section": "sections", "inputs_section": "sections",
    "leaderboard_section": "sections", "methods_section": "sections", "pairwise_section": "sections",
    "unit_section": "sections", "win_rate_section": "sections",
    "ReportSpec": "write", "SectionBuilder": "write", "build_report": "write", "read_scores": "write",
    "write_report": "write",
}

__all__ = [
    "write_report", "ReportSpec", "build_report", "read_scores", "SectionBuilder", "DEFAULT_SECTIONS", "plain",
    "ReportContext", "Section", "Text", "Bullets", "Table", "Figure", "render_markdown", "render_html",
    "inputs_section", "leaderboard_section", "win_rate_section", "head_to_head_section", "pairwise_section",
    "unit_section", "methods_section", "Headline", "Finding",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
