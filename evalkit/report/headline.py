"""The headline: the few findings a reader must not miss, and the caveats, before anything else.

Every report (``report.html``, ``report.md``) opens with its headline, and ``evalkit rate``,
``compare`` and ``report`` print it first on the terminal. A *finding* is one sentence with its
number and its interval or p-value (the leader and whether it is separable from the runner-up,
a judge's position bias, a paired difference and its verdict, an inflection point); a *caveat*
says what limits the numbers (few clusters, degenerate bootstrap replicates, thin rows, a
cancelled run, dropped rows).

Contributing a finding
----------------------
Any section builder gets a :class:`~evalkit.report.ReportContext` whose ``headline`` is a
:class:`Headline`; call :meth:`Headline.finding` or :meth:`Headline.caveat` while you build
your section, naming the section (its title or anchor) so that the headline links to it::

    from evalkit._format import format_estimate, format_p
    from evalkit.report import Section, Text, plain

    def my_section(ctx):
        d, lo, hi, p = 0.118, 0.031, 0.205, 0.0172
        ctx.headline.finding(
            f"**{plain('candidate')}** − **{plain('baseline')}**: {format_estimate(d, lo, hi, sign=True)}, "
            f"p = {format_p(p)}: significant at alpha = 0.05.",
            section="Paired comparison", severity="high", source="compare")
        ctx.headline.caveat("The interval rests on 8 clusters (fewer than about 30): read it as rough.",
                            section="Paired comparison", source="cover")
        return Section("Paired comparison", (Text("..."),))

The text takes the light markup of :class:`~evalkit.report.Text` (``**bold**``, backticks,
``[text](#anchor)``); wrap every value from the data in :func:`~evalkit.report.plain`. Use
:mod:`evalkit._format` for the numbers (``format_p``, ``format_estimate``) so that they read as
the tables print them. ``severity`` orders the block: ``"high"`` (a reader must not miss it:
the leader, a significant bias, the verdict of the comparison asked for), ``"medium"``
(default), ``"low"``. At most :data:`MAX_FINDINGS` findings and :data:`MAX_CAVEATS` caveats
are shown, highest severity first and otherwise in the order contributed; the rest are
counted ("2 more findings in the sections below"). A text contributed twice is kept once.

A command without a report builds its own ``Headline()``, adds to it the same way and prints
:meth:`Headline.to_text` (``evalkit rate`` does, with :func:`evalkit.report.findings.leaderboard_findings`).
``run.json`` records the headline as :meth:`Headline.to_records`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Finding", "Headline", "Severity", "MAX_FINDINGS", "MAX_CAVEATS", "SEVERITIES", "plain_text",
           "section_id"]

Severity = Literal["high", "medium", "low"]
#: Severities, most important first.
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low")
#: Findings and caveats shown (the rest are counted, not shown).
MAX_FINDINGS, MAX_CAVEATS = 5, 5

_PLAIN = re.compile("\ue000(.*?)\ue001", re.S)


def section_id(title: str) -> str:
    """The HTML anchor of a section titled ``title`` (as :attr:`evalkit.report.Section.id`)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def plain_text(text: str) -> str:
    """A headline text without its markup (``**``, backticks, ``[text](url)`` -> ``text``),
    values from the data kept literally: for the terminal and ``run.json``."""
    values: list[str] = []

    def slot(m: re.Match[str]) -> str:
        values.append(m.group(1))
        return f"\ue002{len(values) - 1}\ue003"

    out = _PLAIN.sub(slot, text)
    out = re.sub(r"\*\*(.+?)\*\*", r"\1", out)
    out = re.sub(r"`([^`]+)`", r"\1", out)
    out = re.sub(r"\[([^\]]+)\]\([^)\s]*\)", r"\1", out)
    return re.sub("\ue002(\\d+)\ue003", lambda m: values[int(m.group(1))], out)


@dataclass(frozen=True)
class Finding:
    """One line of the headline.

    Attributes
    ----------
    text : str
        One sentence with its number and interval or p-value (light markup, data values in
        :func:`~evalkit.report.plain`).
    kind : {"finding", "caveat"}
    severity : {"high", "medium", "low"}
    section : str or None
        Title or anchor of the section it summarises (the headline links there).
    source : str
        Who contributed it (a section or command name), for ``run.json``.
    """

    text: str
    kind: Literal["finding", "caveat"] = "finding"
    severity: Severity = "medium"
    section: str | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("finding", "caveat"):
            raise ValueError(f"kind must be 'finding' or 'caveat'; got {self.kind!r}.")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}; got {self.severity!r}.")
        if not self.text.strip():
            raise ValueError("a headline finding needs a text.")


@dataclass
class Headline:
    """The findings and caveats contributed so far (see the module docstring)."""

    items: list[Finding] = field(default_factory=list)

    def add(self, item: Finding) -> Finding:
        """Add ``item`` (once: an identical text of the same kind is not repeated)."""
        if not any(i.text == item.text and i.kind == item.kind for i in self.items):
            self.items.append(item)
        return item

    def finding(self, text: str, *, section: str | None = None, severity: Severity = "medium",
                source: str = "") -> Finding:
        """Contribute a finding: one sentence with its number and interval or p-value."""
        return self.add(Finding(text, "finding", severity, section, source))

    def caveat(self, text: str, *, section: str | None = None, severity: Severity = "medium",
               source: str = "") -> Finding:
        """Contribute a caveat: what limits the numbers (few clusters, thin rows, ...)."""
        return self.add(Finding(text, "caveat", severity, section, source))

    def extend(self, items: Iterable[Finding]) -> None:
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def _ranked(self, kind: str) -> list[Finding]:
        mine = [i for i in self.items if i.kind == kind]
        return sorted(mine, key=lambda i: SEVERITIES.index(i.severity))  # stable: contribution order within

    @property
    def findings(self) -> list[Finding]:
        """All findings, highest severity first."""
        return self._ranked("finding")

    @property
    def caveats(self) -> list[Finding]:
        """All caveats, highest severity first."""
        return self._ranked("caveat")

    def shown(self, max_findings: int = MAX_FINDINGS,
              max_caveats: int = MAX_CAVEATS) -> tuple[list[Finding], list[Finding], int, int]:
        """``(findings, caveats, findings left out, caveats left out)`` as the headline shows them."""
        f, c = self.findings, self.caveats
        return f[:max_findings], c[:max_caveats], max(len(f) - max_findings, 0), max(len(c) - max_caveats, 0)

    def to_text(self, *, titles: dict[str, str] | None = None) -> str:
        """The headline for the terminal: ``Headline`` and one line per finding (``!`` for a
        caveat), each ending with the section it comes from; empty when nothing was contributed."""
        from evalkit._escape import label

        if not self.items:
            return ""
        findings, caveats, more_f, more_c = self.shown()
        titles = titles or {}
        lines = ["Headline"]
        for mark, group in (("-", findings), ("!", caveats)):
            for item in group:
                where = titles.get(item.section or "", item.section)
                lines.append(f"{mark} {label(plain_text(item.text))}" + (f" [{label(where)}]" if where else ""))
        lines += [f"  ({n} more {what} in the report)" for n, what in ((more_f, "findings"), (more_c, "caveats")) if n]
        return "\n".join(lines)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> Headline:
        """The headline back from :meth:`to_records` (e.g. ``run.json``'s ``"headline"``); texts
        are plain, sections are anchors."""
        out = cls()
        for r in records:
            out.add(Finding(str(r["text"]), r.get("kind", "finding"), r.get("severity", "medium"), r.get("section"),
                            str(r.get("source", ""))))
        return out

    def to_records(self, *, ids: dict[str, str] | None = None) -> list[dict[str, str | None]]:
        """Every finding and caveat as plain records (for ``run.json``): ``kind, severity, text,
        section`` (its anchor) and ``source``."""
        ids = ids or {}
        return [{"kind": i.kind, "severity": i.severity, "text": plain_text(i.text),
                 "section": ids.get(i.section or "", i.section), "source": i.source}
                for i in (*self.findings, *self.caveats)]


def resolve_sections(titles_and_ids: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``{title or id: id}`` for the sections of a report, so that a finding may name either."""
    out: dict[str, str] = {}
    for title, sid in titles_and_ids:
        out[title] = sid
        out[sid] = sid
        out.setdefault(section_id(title), sid)
    return out
