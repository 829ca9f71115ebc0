"""What a reader did: the :class:`ReadReport` and the :class:`ReadResult` pair.

Every reader returns the canonical frame together with a report of the rows it read, kept
and dropped (by reason), the format it used and notes on anything odd in the data (another
annotator, a file that looks like a copy of another, models missing items). Nothing is
dropped without being counted here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["ReadReport", "ReadResult", "merge_reports"]


@dataclass(frozen=True)
class ReadReport:
    """Account of one read.

    Attributes
    ----------
    source : str
        The file (or ``"<DataFrame>"``) read; several files are joined with ``", "``.
    format : str
        Name of the format used (see :data:`evalkit.io.FORMATS`), detected or given.
    rows_read : int
        Records found in the source (data lines of a CSV/JSONL file, elements of a JSON
        list, rows of a Parquet file or DataFrame).
    rows_kept : int
        Rows in the returned frame.
    dropped : Mapping[str, int]
        Rows dropped, by reason. ``rows_read == rows_kept + sum(dropped.values())`` except
        for formats where one record yields several rows (none so far).
    notes : tuple of str
        Observations that did not change the rows but that a user should know about.
    """

    source: str
    format: str
    rows_read: int
    rows_kept: int
    dropped: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dropped", MappingProxyType(dict(self.dropped)))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def n_dropped(self) -> int:
        """Total rows dropped over all reasons."""
        return int(sum(self.dropped.values()))

    def to_text(self) -> str:
        """A short human-readable account (what the CLI prints)."""
        lines = [
            f"read {self.rows_read} rows from {self.source} as '{self.format}': "
            f"kept {self.rows_kept}, dropped {self.n_dropped}"
        ]
        lines += [f"  dropped {n}: {reason}" for reason, n in self.dropped.items()]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


class ReadResult(NamedTuple):
    """The validated canonical comparisons frame and the report of how it was read.

    Unpacks as ``frame, report = read_comparisons(...)``.
    """

    frame: pd.DataFrame
    report: ReadReport


def merge_reports(reports: Iterable[ReadReport]) -> ReadReport:
    """Combine the reports of several reads (e.g. several files) into one."""
    reports = list(reports)
    if not reports:
        raise ValueError("merge_reports needs at least one report; got none.")
    if len(reports) == 1:
        return reports[0]
    dropped: dict[str, int] = {}
    for rep in reports:
        for reason, n in rep.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
    formats = list(dict.fromkeys(r.format for r in reports))
    notes = list(dict.fromkeys(n for r in reports for n in r.notes))
    return ReadReport(
        source=", ".join(r.source for r in reports),
        format="+".join(formats),
        rows_read=sum(r.rows_read for r in reports),
        rows_kept=sum(r.rows_kept for r in reports),
        dropped=dropped,
        notes=tuple(notes),
    )
