"""Reading runs for the time horizon: METR's runs file, run tables, and a task -> minutes file.

Column names are matched case-insensitively, first match wins:

=========  =====================================================================
column     accepted names
=========  =====================================================================
agent      ``agent``, ``alias`` (METR), ``system``, ``model``
task       ``task``, ``task_id`` (METR)
family     ``family``, ``task_family`` (METR); optional (default: the task)
minutes    ``minutes``, ``human_minutes`` (METR); or from a minutes file
score      ``score_binarized`` (METR), ``score``, ``success``, ``resolved``, ``passed``
=========  =====================================================================

Errors name the file, the line and the column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_horizon_runs", "read_minutes", "attach_minutes", "read_run_table", "ALIASES"]

ALIASES: dict[str, tuple[str, ...]] = {
    "agent": ("agent", "alias", "system", "model"),
    "task": ("task", "task_id"),
    "family": ("family", "task_family"),
    "minutes": ("minutes", "human_minutes"),
    "score": ("score_binarized", "score", "success", "resolved", "passed"),
}
_TRUE = {"true", "yes", "pass", "passed", "resolved", "success", "c", "correct"}
_FALSE = {"false", "no", "fail", "failed", "unresolved", "failure", "i", "incorrect"}


def _pick(raw: pd.DataFrame, name: str, mapping: Mapping[str, str] | None) -> str | None:
    if mapping and name in mapping:
        col = mapping[name]
        if col not in raw.columns:
            raise ValueError(f"--map {name}={col}: there is no column {col!r}; the file has "
                             f"{[c for c in raw.columns if c != '_line']}.")
        return col
    lower = {str(c).lower(): c for c in raw.columns}
    return next((lower[a] for a in ALIASES[name] if a in lower), None)


def _load(path: str, encoding: str | None) -> pd.DataFrame:
    from evalkit.io._files import load_records

    frame, _ = load_records(path, encoding=encoding)
    return frame


def _positive(raw: pd.DataFrame, col: str, source: str, what: str) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(raw[col], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{source}, line {int(raw['_line'].to_numpy()[i])}, column '{col}': expected {what} (a number > 0), "
                         f"found {raw[col].iat[i]!r}. {int(bad.sum())} row(s) are like this.")
    return values


def _numbers_and_words(v: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """A column as floats (true/false words as 1/0, anything else unreadable as NaN) and its
    stripped, lower-cased text."""
    import pandas as pd

    num = pd.to_numeric(v, errors="coerce").to_numpy(float)
    text = v.astype(str).str.strip().str.lower()
    num = np.where(np.isnan(num) & text.isin(_TRUE).to_numpy(), 1.0, num)
    return np.where(np.isnan(num) & text.isin(_FALSE).to_numpy(), 0.0, num), text


def _scores(raw: pd.DataFrame, col: str, source: str) -> np.ndarray:
    import pandas as pd

    v = raw[col]
    if pd.api.types.is_bool_dtype(v):
        return v.astype(float).to_numpy()
    num, text = _numbers_and_words(v)
    bad = ~np.isfinite(num) | (num < 0) | (num > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{source}, line {int(raw['_line'].to_numpy()[i])}, column '{col}': expected a success in [0, 1] "
                         f"(1/0, true/false), found {v.iat[i]!r}. {int(bad.sum())} row(s) are like this; binarise "
                         "other scores first (METR's runs have score_binarized).")
    return num


def read_minutes(path: str, *, columns: Mapping[str, str] | None = None, encoding: str | None = None) -> pd.DataFrame:
    """A task -> human minutes (and family) table: ``task, minutes`` and ``family`` if present.

    ``path``: CSV / JSONL / JSON / Parquet with a task and a minutes column, or METR's runs file
    (one row per run; every task must have one length).
    """
    import pandas as pd

    raw = _load(path, encoding)
    task, minutes, family = (_pick(raw, n, columns) for n in ("task", "minutes", "family"))
    if task is None or minutes is None:
        raise ValueError(f"{path}: a minutes file needs a task column ({'/'.join(ALIASES['task'])}) and a minutes "
                         f"column ({'/'.join(ALIASES['minutes'])}); it has {[c for c in raw.columns if c != '_line']}.")
    out = pd.DataFrame({"task": raw[task].astype(str), "minutes": _positive(raw, minutes, path, "human minutes"),
                        "_line": raw["_line"].to_numpy()})
    if family is not None:
        out["family"] = raw[family].astype(str)
    for col in [c for c in ("minutes", "family") if c in out.columns]:
        n = out.groupby("task")[col].nunique()
        if (n > 1).any():
            t = n.index[n > 1][0]
            rows = out[out["task"] == t]
            first = rows[col].iat[0]
            other = rows[rows[col] != first]
            raise ValueError(f"{path}, line {int(other['_line'].iat[0])}, column '{minutes if col == 'minutes' else family}'"
                             f": task {t!r} has {col} {other[col].iat[0]!r} here but {first!r} at line "
                             f"{int(rows['_line'].iat[0])}; give each task one value.")
    return out.drop_duplicates("task").drop(columns="_line").reset_index(drop=True)


def attach_minutes(runs: pd.DataFrame, minutes: pd.DataFrame, *, source: str = "the minutes file") -> pd.DataFrame:
    """``runs`` (``agent, task, score``) with ``minutes`` (and ``family``) looked up by task.

    Runs of tasks the minutes table does not know are dropped and counted in ``attrs["dropped"]``
    (an error if none is left)."""
    table = minutes.set_index("task")
    known = runs["task"].astype(str).isin(table.index)
    if not known.any():
        raise ValueError(f"None of the {runs['task'].nunique()} tasks of the runs (e.g. {runs['task'].iat[0]!r}) is in "
                         f"{source} (e.g. {table.index[0]!r}); the task names must match.")
    out = runs[known].copy()
    out["minutes"] = table.loc[out["task"].astype(str), "minutes"].to_numpy(float)
    if "family" in table.columns and "family" not in out.columns:
        out["family"] = table.loc[out["task"].astype(str), "family"].to_numpy()
    dropped = runs[~known]
    out.attrs["dropped"] = {"runs": int(len(dropped)), "tasks": sorted(dropped["task"].astype(str).unique())}
    return out.reset_index(drop=True)


def read_horizon_runs(paths: str | Sequence[str], *, minutes: str | pd.DataFrame | None = None,
                      columns: Mapping[str, str] | None = None, encoding: str | None = None) -> pd.DataFrame:
    """Runs for :func:`evalkit.metrics.time_horizon`: ``agent, task, family, minutes, score, source, line``.

    Parameters
    ----------
    paths : path or paths
        Run tables (CSV, JSONL, JSON, Parquet, gzip of any), e.g. METR's ``all_runs.jsonl``.
    minutes : path or DataFrame, optional
        A task -> minutes table (:func:`read_minutes`), required when the runs have no minutes
        column; when they do, it overrides them.
    columns : mapping, optional
        ``{canonical: column}`` for names not in the alias table (CLI ``--map``).
    """
    import pandas as pd

    parts = []
    for path in [paths] if isinstance(paths, str) else list(paths):
        raw = _load(path, encoding)
        found = {n: _pick(raw, n, columns) for n in ALIASES}
        need = [n for n in ("agent", "task", "score") if found[n] is None]
        if need:
            raise ValueError(f"{path}: the runs need {', '.join(need)} column(s) (accepted names: "
                             f"{'; '.join(f'{n}: ' + '/'.join(ALIASES[n]) for n in need)}); it has "
                             f"{[c for c in raw.columns if c != '_line']}. Map others with --map NAME=COLUMN.")
        part = pd.DataFrame({"agent": raw[found["agent"]].astype(str), "task": raw[found["task"]].astype(str),
                             "score": _scores(raw, str(found["score"]), path), "source": path,
                             "line": raw["_line"].to_numpy()})
        if found["family"] is not None:
            part["family"] = raw[found["family"]].astype(str)
        if found["minutes"] is not None and minutes is None:
            part["minutes"] = _positive(raw, str(found["minutes"]), path, "human minutes")
        parts.append(part)
    runs = pd.concat(parts, ignore_index=True)
    if minutes is not None:
        table = minutes if not isinstance(minutes, str) else read_minutes(minutes, columns=columns, encoding=encoding)
        runs = attach_minutes(runs.drop(columns=[c for c in ("minutes",) if c in runs.columns]), table,
                              source=minutes if isinstance(minutes, str) else "the minutes table")
    elif "minutes" not in runs.columns:
        raise ValueError(f"The runs have no minutes column ({'/'.join(ALIASES['minutes'])}); give the human minutes "
                         "of each task with --minutes FILE (a task,minutes table or METR's runs file).")
    return runs


_RUN_ALIASES: dict[str, tuple[str, ...]] = {
    "system": ("system", "agent", "alias", "model_name"),
    "task": ("task", "task_id", "instance_id", "sample_id"),
    "score": ("score", "score_binarized", "success", "resolved", "passed", "accuracy"),
}


def read_run_table(paths: str | Sequence[str], *, columns: Mapping[str, str] | None = None,
                   encoding: str | None = None) -> pd.DataFrame:
    """One row per run from run tables: ``system, task, score`` (NaN where not scored), the usage
    columns of :data:`evalkit.metrics.cost.USAGE_COLUMNS` and ``model``, ``status``,
    ``completed`` where present, plus ``source, line``. Errors name the file, line and column."""
    import pandas as pd

    from evalkit.metrics.cost import USAGE_COLUMNS

    parts = []
    for path in [paths] if isinstance(paths, str) else list(paths):
        raw = _load(path, encoding)
        lower = {str(c).lower(): c for c in raw.columns}
        found: dict[str, str | None] = {}
        for name, names in _RUN_ALIASES.items():
            if columns and name in columns:
                if columns[name] not in raw.columns:
                    raise ValueError(f"--map {name}={columns[name]}: {path} has no such column; it has "
                                     f"{[c for c in raw.columns if c != '_line']}.")
                found[name] = columns[name]
            else:
                found[name] = next((lower[a] for a in names if a in lower), None)
        need = [n for n in ("system", "task", "score") if found[n] is None]
        if need:
            raise ValueError(f"{path}: a run table needs {', '.join(need)} column(s) (accepted: "
                             f"{'; '.join(f'{n}: ' + '/'.join(_RUN_ALIASES[n]) for n in need)}); it has "
                             f"{[c for c in raw.columns if c != '_line']}. Map others with --map NAME=COLUMN.")
        part = pd.DataFrame({"system": raw[found["system"]].astype(str), "task": raw[found["task"]].astype(str)})
        part["score"] = _any_scores(raw, str(found["score"]), path)
        for col in (*USAGE_COLUMNS, "model", "status", "completed"):
            src = (columns or {}).get(col) or lower.get(col)
            if src is None:
                continue
            if col in USAGE_COLUMNS:
                v = raw[src]
                vals = pd.to_numeric(v, errors="coerce").to_numpy(float)
                empty = v.isna() | (v.astype(str).str.strip() == "")
                bad = (~empty.to_numpy() & ~np.isfinite(vals)) | (vals < 0)
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(f"{path}, line {int(raw['_line'].to_numpy()[i])}, column '{src}': expected a number >= 0 "
                                     f"({'dollars' if col == 'cost' else 'seconds' if col == 'time' else 'tokens'}), "
                                     f"found {v.iat[i]!r}.")
                part[col] = vals
            else:
                part[col] = raw[src].to_numpy()
        part["source"] = path
        part["line"] = raw["_line"].to_numpy()
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _any_scores(raw: pd.DataFrame, col: str, source: str) -> np.ndarray:
    """Numeric scores as they are (any scale), true/false words as 1/0, blanks as NaN (not scored)."""
    import pandas as pd

    v = raw[col]
    if pd.api.types.is_bool_dtype(v):
        return v.astype(float).to_numpy()
    num, text = _numbers_and_words(v)
    blank = (v.isna() | (text == "") | text.isin({"nan", "none", "null"})).to_numpy()
    bad = ~blank & ~np.isfinite(num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{source}, line {int(raw['_line'].to_numpy()[i])}, column '{col}': expected a score (a number, or "
                         f"true/false), found {v.iat[i]!r}; leave it empty for a run that was not scored.")
    return np.where(blank, np.nan, num)
