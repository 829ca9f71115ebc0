"""Chatbot Arena battles and MT-bench pairwise judgments (the LMSYS / FastChat logs).

Chatbot Arena (``clean_battle_*.json`` and the MT-bench human judgments): one record per
battle with ``model_a``, ``model_b`` and ``winner`` in ``model_a`` / ``model_b`` / ``tie`` /
``tie (bothbad)``. ``player_a`` = ``model_a``; both kinds of tie score 0.5. Optional
``question_id`` becomes ``item`` and ``judge`` becomes ``judge``.

MT-bench pairwise (``model_judgment/gpt-4_pair.jsonl`` written by FastChat's
``gen_judgment.py``): ``model_1``, ``model_2`` and the verdicts of the two answer orders,
``g1_winner`` (model_1's answer shown first) and ``g2_winner`` (order swapped), both already
expressed as ``model_1`` / ``model_2`` / ``tie`` / ``error``. We follow the MT-bench authors'
``fastchat/llm_judge/show_result.py`` (``display_result_pairwise``): rows where either
verdict is ``error`` are dropped (counted here); a win counts only when both orders agree;
if ``g1_winner`` is ``tie`` or the two orders disagree, the game is a tie (0.5). The number
of games whose two orders disagree (``g1_winner != g2_winner``, including ``tie`` against a
win) is reported.

MT-bench single-answer grading (``model_judgment/gpt-4_single.jsonl``, MT-bench's default
mode): one record per (model, question, turn) with the judge's ``score`` from 1 to 10, or -1
when the judge gave none. :func:`mt_bench_single_rows` turns it into outcome rows (system =
``model``, task = ``<question_id>/turn<turn>``, budget not recorded); as in FastChat's
``display_result_single``, a score of -1 is dropped (counted). A (model, question, turn) judged
twice (a re-run of ``gen_judgment.py``) becomes two runs of that task.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.io._common import (
    Converted,
    base_frame,
    join_judge,
    keep_all,
    map_labels,
    require_columns,
)
from evalkit.io._files import LINE
from evalkit.io.formats import ARENA_WINNERS  # noqa: F401 - re-exported

__all__ = ["ARENA_WINNERS", "MT_BENCH_WINNERS", "convert_arena", "convert_mt_bench", "is_mt_bench_single",
           "mt_bench_single_rows"]

MT_BENCH_WINNERS: tuple[str, ...] = ("model_1", "model_2", "tie", "error")


def _optional(raw: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    if "question_id" in raw.columns:
        frame["item"] = raw["question_id"].to_numpy(dtype=object)
    if "judge" in raw.columns:
        frame["judge"] = join_judge(raw["judge"]).to_numpy(dtype=object)
    if "turn" in raw.columns:
        frame["turn"] = raw["turn"].to_numpy(dtype=object)
    return frame


def convert_arena(raw: pd.DataFrame, *, source: str) -> Converted:
    """Chatbot Arena battles -> canonical rows (see the module docstring)."""
    require_columns(raw, ("model_a", "model_b", "winner"), fmt="arena", source=source)
    outcome = map_labels(raw["winner"], ARENA_WINNERS, column="winner", source=source,
                         lines=raw[LINE].to_numpy())
    frame = _optional(raw, base_frame(raw, raw["model_a"], raw["model_b"], outcome))
    return Converted(frame, keep_all(len(frame)), [])


def convert_mt_bench(raw: pd.DataFrame, *, source: str) -> Converted:
    """MT-bench pairwise judgments -> canonical rows, both orders combined as FastChat does."""
    require_columns(raw, ("model_1", "model_2", "g1_winner", "g2_winner"), fmt="mt_bench",
                    source=source)
    lines = raw[LINE].to_numpy()
    codes = {label: float(i) for i, label in enumerate(MT_BENCH_WINNERS)}
    g1 = map_labels(raw["g1_winner"], codes, column="g1_winner", source=source, lines=lines)
    g2 = map_labels(raw["g2_winner"], codes, column="g2_winner", source=source, lines=lines)
    error = (g1 == 3) | (g2 == 3)
    agree_win = (g1 == g2) & (g1 < 2)
    outcome = np.where(agree_win, np.where(g1 == 0, 1.0, 0.0), 0.5)
    outcome[error] = np.nan
    frame = _optional(raw, base_frame(raw, raw["model_1"], raw["model_2"], outcome))
    drop = keep_all(len(frame))
    drop[error] = "judge verdict 'error' in g1_winner or g2_winner (FastChat drops these)"
    notes = []
    split = ~error & (g1 != g2)  # show_result.py: a tie whenever g1 is 'tie' or g1 != g2
    if split.any():
        notes.append(
            f"{int(split.sum())} of {int((~error).sum())} games had inconsistent verdicts across "
            "the two answer orders (g1_winner != g2_winner, a tie against a win included) and count as "
            "ties (as in FastChat's show_result.py)"
        )
    return Converted(frame, drop, notes)


MT_BENCH_SINGLE_KEYS: tuple[str, ...] = ("question_id", "model", "score", "turn")


def is_mt_bench_single(record: object) -> bool:
    """Whether a parsed JSONL record is an MT-bench single-answer judgment."""
    return isinstance(record, dict) and all(k in record for k in MT_BENCH_SINGLE_KEYS) and "model_1" not in record


def mt_bench_single_rows(path: object) -> tuple[list[dict], list[str], list[str], dict]:
    """Outcome rows of an MT-bench single-answer judgment file (``gpt-4_single.jsonl``, plain or gzip).

    Returns
    -------
    rows, unscored, notes, meta
        One row per judgment: ``system`` (the model), ``task`` (``<question_id>/turn<turn>``),
        ``session`` (``<judge prompt>#<k>``, k counting repeated judgments of the same answer),
        ``score`` (1-10), ``question`` (to cluster the two turns of a question) and ``line``;
        budget NaN. Judgments with score -1 (FastChat drops them) are unscored.
    """
    from pathlib import Path

    from evalkit.io._files import load_records

    p = Path(str(path))
    raw, _ = load_records(p)
    require_columns(raw, MT_BENCH_SINGLE_KEYS, fmt="mt_bench_single", source=p.name)
    rows, unscored = [], []
    seen: dict[tuple[str, str], int] = {}
    for rec in raw.to_dict("records"):
        judge = rec.get("judge")
        judge_name = "/".join(map(str, judge)) if isinstance(judge, (list, tuple, np.ndarray)) else str(judge)
        task = f"{rec['question_id']}/turn{rec['turn']}"
        score = pd.to_numeric(pd.Series([rec["score"]]), errors="coerce").iat[0]
        if pd.isna(score) or score == -1:
            unscored.append(f"{rec['model']}/{task}")
            continue
        k = seen.get((str(rec["model"]), task), 0) + 1
        seen[(str(rec["model"]), task)] = k
        rows.append({"system": str(rec["model"]), "task": task, "session": f"{judge_name}#{k}",
                     "budget": float("nan"), "score": float(score), "source": p.name, "line": int(rec[LINE]),
                     "question": str(rec["question_id"]), "judge": judge_name, "model": str(rec["model"])})
    repeats = sum(1 for v in seen.values() if v > 1)
    notes = [f"{p.name}: {repeats} (model, question, turn) answer(s) were judged more than once; each judgment is "
             "a run of its task (FastChat's show_result.py averages all judgments instead)."] if repeats else []
    return rows, unscored, notes, {"format": "mt_bench_single"}
