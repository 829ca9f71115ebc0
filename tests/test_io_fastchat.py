"""Chatbot Arena battles and MT-bench pairwise judgments (LMSYS / FastChat formats)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.io import read_comparisons
from evalkit.summary import summarize

BATTLES = [
    {"model_a": "gpt-4", "model_b": "claude-v1", "winner": "model_a", "question_id": "q1",
     "judge": "arena_user_1", "turn": 1},
    {"model_a": "claude-v1", "model_b": "vicuna-13b", "winner": "tie", "question_id": "q2",
     "judge": "arena_user_2", "turn": 1},
    {"model_a": "vicuna-13b", "model_b": "gpt-4", "winner": "model_b", "question_id": "q3",
     "judge": "arena_user_1", "turn": 2},
    {"model_a": "gpt-4", "model_b": "vicuna-13b", "winner": "tie (bothbad)", "question_id": "q4",
     "judge": "arena_user_3", "turn": 1},
]


@pytest.mark.parametrize("container", ["json", "jsonl"])
def test_arena_json_and_jsonl(tmp_path, container):
    path = tmp_path / f"battles.{container}"
    if container == "json":
        path.write_text(json.dumps(BATTLES, indent=2))
    else:
        path.write_text("\n".join(json.dumps(b) for b in BATTLES) + "\n")
    frame, report = read_comparisons(path)
    assert report.format == "arena" and report.rows_read == 4 and report.n_dropped == 0
    assert frame["outcome"].tolist() == [1.0, 0.5, 0.0, 0.5]
    assert frame["player_a"].tolist() == [b["model_a"] for b in BATTLES]
    assert frame["item"].tolist() == ["q1", "q2", "q3", "q4"]
    assert frame["judge"].tolist() == [b["judge"] for b in BATTLES]
    assert frame["line"].tolist() == [1, 2, 3, 4]


def _fastchat_pairwise(df_all: pd.DataFrame) -> pd.DataFrame:
    """Win/loss/tie counts exactly as FastChat's fastchat/llm_judge/show_result.py
    (display_result_pairwise) computes them: drop 'error' rows; tie if g1 is 'tie' or the
    two orders disagree; otherwise g1's winner wins. Transcribed as the reference."""
    df_all = df_all[(df_all["g1_winner"] != "error") & (df_all["g2_winner"] != "error")]
    res = []
    for _, row in df_all.iterrows():
        if row["g1_winner"] == "tie" or row["g1_winner"] != row["g2_winner"]:
            res.append({"model": row["model_1"], "win": 0, "loss": 0, "tie": 1})
            res.append({"model": row["model_2"], "win": 0, "loss": 0, "tie": 1})
        else:
            if row["g1_winner"] == "model_1":
                winner, loser = row["model_1"], row["model_2"]
            else:
                winner, loser = row["model_2"], row["model_1"]
            res.append({"model": winner, "win": 1, "loss": 0, "tie": 0})
            res.append({"model": loser, "win": 0, "loss": 1, "tie": 0})
    return pd.DataFrame(res).groupby("model").sum()


def test_mt_bench_pairwise_matches_fastchat_rule(tmp_path):
    rng = np.random.default_rng(7)
    models = ["gpt-4", "gpt-3.5-turbo", "vicuna-13b-v1.3", "llama-13b"]
    labels = ["model_1", "model_2", "tie", "error"]
    rows = []
    for qid in range(80):
        i, j = rng.choice(len(models), size=2, replace=False)
        rows.append({
            "question_id": 81 + qid, "model_1": models[i], "model_2": models[j],
            "g1_winner": labels[rng.choice(4, p=[0.4, 0.35, 0.15, 0.1])],
            "g2_winner": labels[rng.choice(4, p=[0.4, 0.35, 0.15, 0.1])],
            "judge": ["gpt-4", "pair-v2"], "turn": 1 + qid % 2,
        })
    path = tmp_path / "gpt-4_pair.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    frame, report = read_comparisons(path)
    raw = pd.DataFrame(rows)
    n_error = int(((raw["g1_winner"] == "error") | (raw["g2_winner"] == "error")).sum())
    assert report.format == "mt_bench"
    assert report.n_dropped == n_error and report.rows_kept == len(rows) - n_error
    ok = raw[(raw["g1_winner"] != "error") & (raw["g2_winner"] != "error")]
    # show_result.py counts a game as a tie whenever g1 != g2, a tie in g1 against a win in g2 included
    n_split = int((ok["g1_winner"] != ok["g2_winner"]).sum())
    assert any(f"{n_split} of {len(ok)} games had inconsistent verdicts" in n for n in report.notes)
    assert set(frame["judge"]) == {"gpt-4/pair-v2"}
    want = _fastchat_pairwise(raw)
    got = summarize(frame).set_index("model")
    np.testing.assert_array_equal(got.loc[want.index, "wins"], want["win"])
    np.testing.assert_array_equal(got.loc[want.index, "losses"], want["loss"])
    np.testing.assert_array_equal(got.loc[want.index, "ties"], want["tie"])


def test_arena_column_oriented_json(tmp_path):
    # pandas' default DataFrame.to_json() writes {column: {row: value}}
    path = tmp_path / "battles.json"
    pd.DataFrame(BATTLES).to_json(path)
    frame, report = read_comparisons(path)
    assert report.format == "arena"
    assert frame["outcome"].tolist() == [1.0, 0.5, 0.0, 0.5]
    assert frame["line"].tolist() == [1, 2, 3, 4]


def test_arena_parquet_with_judge_lists(tmp_path):
    path = tmp_path / "battles.parquet"
    df = pd.DataFrame(BATTLES).assign(judge=[["gpt-4", "pair-v2"]] * 4)
    df.to_parquet(path)
    frame, _ = read_comparisons(path)
    assert set(frame["judge"]) == {"gpt-4/pair-v2"}
