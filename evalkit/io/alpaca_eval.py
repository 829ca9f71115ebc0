"""AlpacaEval annotations: the raw ``annotations.json`` and the compact derived CSV.

Orientation (documented choice): ``player_a`` is the evaluated model (``generator_2``) and
``player_b`` the baseline (``generator_1``), so ``outcome`` is the model's score against the
baseline, exactly the ``x`` of AlpacaEval's metrics: ``x = preference - 1`` after mapping the
legacy draw code ``0`` to ``1.5``. Preferences 1 (baseline wins) -> 0, 2 (model wins) -> 1,
1.5 or 0 (draw) -> 0.5, and the continuous preferences in [1, 2] of the weighted annotators
stay continuous. ``NaN`` / ``None`` means the annotator gave no valid answer: AlpacaEval drops
those rows before computing ``n_total``, and so do we (counted in the report). Any other
value is an error. Rows where the model is the baseline itself (AlpacaEval 2 lists
``gpt4_1106_preview`` against itself) are dropped and counted too. ``annotator`` becomes ``judge``, the instruction (text, or
``instruction_id`` in the CSV) becomes ``item`` and ``dataset`` becomes ``task``.

Raw files live in AlpacaEval as ``results/<model>/<annotator>/annotations.json``. The
leaderboard names a model by that directory; ``generator_2`` usually agrees, but not always
(``falcon-7b-instruct``'s file is a byte copy of ``falcon-40b-instruct``'s). With
``model_name_from="directory"`` the player is named after the directory and every
disagreement with ``generator_2`` is noted in the report.

The derived CSV (``model_dir,generator_2,[annotator,]instruction_id,preference,...``) has no
baseline column; it is taken from ``baseline=`` or from a file name of the form
``<annotator>__vs_<baseline>__preferences.csv``. ``model_dir`` names the player.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit._errors import describe_bad, where
from evalkit.io._common import Converted, base_frame, keep_all, require_columns
from evalkit.io._files import LINE

__all__ = ["convert_alpaca_eval", "convert_alpaca_eval_csv", "alpaca_eval_notes", "preference_to_outcome"]

_NO_ANNOTATION = "preference is NaN/None (the annotator gave no valid answer; AlpacaEval drops these)"
_BASELINE_SELF = "the baseline judged against itself (AlpacaEval's reference entry)"
_NAME = re.compile(r"^(?P<annotator>.+?)__vs_(?P<baseline>.+?)__")


def preference_to_outcome(
    preference: pd.Series, *, column: str = "preference", source: str = "<data>",
    lines: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """AlpacaEval preference -> the model's score ``x`` and a mask of missing annotations.

    ``x = preference - 1`` with ``0`` (legacy draw) mapped to ``1.5`` first; NaN/None are
    flagged in the mask (their ``x`` is NaN). Values that are neither missing, 0, nor in
    [1, 2] raise a ValueError.
    """
    pref = pd.to_numeric(preference, errors="coerce").to_numpy(dtype=float)
    missing = preference.isna().to_numpy()
    not_number = np.isnan(pref) & ~missing
    pref = np.where(pref == 0, 1.5, pref)
    out_of_range = ~np.isnan(pref) & ((pref < 1) | (pref > 2))
    bad = not_number | out_of_range
    if bad.any():
        raise ValueError(
            f"The '{column}' column of {source} must be 1 (baseline wins), 2 (model wins), "
            "1.5 or 0 (draw), a number in [1, 2] (weighted annotators), or NaN/None (no "
            f"annotation, dropped). Got {describe_bad(preference.to_numpy(), bad)} "
            f"{where(bad, lines)} instead."
        )
    return pref - 1.0, missing


def _drops(frame: pd.DataFrame, missing: np.ndarray) -> np.ndarray:
    drop = keep_all(len(frame))
    drop[missing] = _NO_ANNOTATION
    drop[(frame["player_a"].astype(str) == frame["player_b"].astype(str)).to_numpy()] = _BASELINE_SELF
    return drop


def _directory_model(path: Path | None, source: str) -> str:
    if path is None or len(path.parts) < 3:
        raise ValueError(
            f"model_name_from='directory' needs the AlpacaEval layout "
            f"results/<model>/<annotator>/annotations.json; got {source}."
        )
    return path.parent.parent.name


def convert_alpaca_eval(
    raw: pd.DataFrame, *, source: str, path: Path | None = None,
    model_name_from: str = "generator_2",
) -> Converted:
    """Raw AlpacaEval annotations -> canonical rows (see the module docstring)."""
    require_columns(raw, ("generator_1", "generator_2", "preference"), fmt="alpaca_eval",
                    source=source)
    if model_name_from not in ("generator_2", "directory"):
        raise ValueError(
            f"model_name_from must be 'generator_2' or 'directory'; got {model_name_from!r}."
        )
    lines = raw[LINE].to_numpy()
    outcome, missing = preference_to_outcome(raw["preference"], source=source, lines=lines)
    model = raw["generator_2"]
    notes: list[str] = []
    if model_name_from == "directory":
        name = _directory_model(path, source)
        other = model.astype(str) != name
        if other.any():
            said = describe_bad(model.to_numpy(), other.to_numpy())
            notes.append(
                f"{source}: generator_2 says {said} in {int(other.sum())} rows, but the directory "
                f"names the model '{name}'; the player is '{name}'"
            )
        model = pd.Series(name, index=raw.index, dtype=object)
    frame = base_frame(raw, model, raw["generator_1"], outcome)
    for src_col, col in (("annotator", "judge"), ("dataset", "task")):
        if src_col in raw.columns:
            frame[col] = raw[src_col].to_numpy(dtype=object)
    item_col = "instruction_id" if "instruction_id" in raw.columns else "instruction"
    if item_col in raw.columns:
        frame["item"] = raw[item_col].to_numpy(dtype=object)
    return Converted(frame, _drops(frame, missing), notes)


def convert_alpaca_eval_csv(
    raw: pd.DataFrame, *, source: str, path: Path | None = None, baseline: str | None = None,
    judge: str | None = None,
) -> Converted:
    """The derived AlpacaEval preferences CSV -> canonical rows (see the module docstring)."""
    model_col = "model_dir" if "model_dir" in raw.columns else "generator_2"
    require_columns(raw, (model_col, "instruction_id", "preference"), fmt="alpaca_eval_csv",
                    source=source)
    match = _NAME.match(path.name) if path is not None else None
    if baseline is None:
        if match is None:
            raise ValueError(
                f"{source} does not name its AlpacaEval baseline (no generator_1 column and no "
                "'<annotator>__vs_<baseline>__' file name). Pass baseline='<model>'."
            )
        baseline = match["baseline"]
    lines = raw[LINE].to_numpy()
    outcome, missing = preference_to_outcome(raw["preference"], source=source, lines=lines)
    frame = base_frame(raw, raw[model_col], pd.Series(baseline, index=raw.index), outcome)
    frame["item"] = raw["instruction_id"].to_numpy(dtype=object)
    if "annotator" in raw.columns:
        frame["judge"] = raw["annotator"].to_numpy(dtype=object)
    elif judge is not None:
        frame["judge"] = judge
    elif match is not None:
        frame["judge"] = match["annotator"]
    notes: list[str] = []
    if model_col == "model_dir" and "generator_2" in raw.columns:
        pairs = raw.loc[raw["model_dir"] != raw["generator_2"], ["model_dir", "generator_2"]]
        for model_dir, gen in pairs.drop_duplicates().itertuples(index=False):
            notes.append(f"model '{model_dir}': generator_2 says '{gen}'; the player is '{model_dir}'")
    return Converted(frame, _drops(frame, missing), notes)


def _list(names, limit: int = 5) -> str:
    names = list(names)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(map(str, names[:limit])) + more


def alpaca_eval_notes(frame: pd.DataFrame) -> list[str]:
    """Quirks worth reporting in a frame of AlpacaEval rows (before NaN rows are dropped).

    Another annotator for some models, several baselines, models lacking some items, and
    models whose outcomes are identical item by item to another model's (a copied file).
    """
    notes: list[str] = []
    if "judge" in frame.columns and frame["judge"].nunique() > 1:
        main = frame["judge"].value_counts().index[0]
        odd = frame.loc[frame["judge"] != main].groupby("judge")["player_a"].unique()
        for judge, models in odd.items():
            notes.append(
                f"another annotator found: '{judge}' judged {_list(models)} "
                f"(the other models were judged by '{main}')"
            )
    if frame["player_b"].nunique() > 1:
        notes.append(f"several baselines: {_list(frame['player_b'].unique())}")
    if "item" in frame.columns:
        n_items = frame["item"].nunique()
        per_model = frame.groupby("player_a")["item"].nunique()
        short = per_model[per_model < n_items]
        if len(short):
            detail = _list(f"{m} ({n_items - k} missing)" for m, k in short.items())
            notes.append(f"{len(short)} models lack some of the {n_items} items: {detail}")
        wide = frame.pivot_table(index="player_a", columns="item", values="outcome",
                                 aggfunc="first", dropna=False).fillna(-1.0).round(12)
        repeated = frame.duplicated(["player_a", "player_b", "item"], keep="first")
        if repeated.any():
            models = frame.loc[repeated, "player_a"].unique()
            notes.append(
                f"{int(repeated.sum())} rows repeat a (model, baseline, item) already read, for "
                f"{_list(models)}: two files may hold the same model"
            )
        if len(wide) > 1:
            key = pd.util.hash_pandas_object(wide, index=False)
            for _, models in key.groupby(key).groups.items():
                if len(models) > 1:
                    m = sorted(map(str, models))
                    notes.append(
                        f"{_list(m[1:])} looks like a copy of {m[0]}: identical outcomes on all "
                        f"{wide.shape[1]} items"
                    )
    return notes
