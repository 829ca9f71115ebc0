"""Property: the same comparisons read through two formats give the same canonical frame."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.io import read_comparisons

NAMES = st.text(alphabet="abcxyz0123456789 -_.", min_size=1, max_size=6).map(lambda s: "m" + s)
ROWS = st.lists(
    st.tuples(NAMES, NAMES, st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 30),
              st.floats(0, 1, allow_nan=False)),
    min_size=1, max_size=40,
).map(lambda rows: [r for r in rows if r[0] != r[1]]).filter(bool)

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in frame.columns if c not in ("source", "line")]
    return frame[cols].sort_values(cols, kind="stable").reset_index(drop=True)


@SETTINGS
@given(rows=ROWS, seed=st.integers(0, 2**32 - 1))
def test_canonical_jsonl_and_shuffled_csv_agree(tmp_path, rows, seed):
    df = pd.DataFrame(rows, columns=["player_a", "player_b", "label", "item", "outcome"])
    df = df.drop(columns="label")
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in df.to_dict("records")))
    csv = tmp_path / "c.csv"
    df.sample(frac=1.0, random_state=np.random.default_rng(seed)).to_csv(csv, index=False)
    a, ra = read_comparisons(jsonl)
    b, rb = read_comparisons(csv)
    assert ra.format == rb.format == "canonical"
    pd.testing.assert_frame_equal(canonical(a), canonical(b))


@SETTINGS
@given(rows=ROWS, seed=st.integers(0, 2**32 - 1))
def test_arena_jsonl_and_left_right_csv_agree(tmp_path, rows, seed):
    to_arena = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}
    to_lr = {1.0: "left", 0.0: "right", 0.5: "tie"}
    arena = tmp_path / "battles.jsonl"
    arena.write_text("\n".join(
        json.dumps({"model_a": a, "model_b": b, "winner": to_arena[s], "question_id": i})
        for a, b, s, i, _ in rows))
    lr = pd.DataFrame({"left": [r[0] for r in rows], "right": [r[1] for r in rows],
                       "winner": [to_lr[r[2]] for r in rows], "prompt": [r[3] for r in rows]})
    csv = tmp_path / "lr.csv"
    lr.sample(frac=1.0, random_state=np.random.default_rng(seed)).to_csv(csv, index=False)
    a, _ = read_comparisons(arena)
    b, _ = read_comparisons(csv)
    pd.testing.assert_frame_equal(canonical(a), canonical(b))
    assert a["outcome"].tolist() == [r[2] for r in rows]


@SETTINGS
@given(rows=ROWS)
def test_parquet_and_dataframe_agree(tmp_path, rows):
    df = pd.DataFrame(rows, columns=["player_a", "player_b", "outcome", "item", "weight"])
    path = tmp_path / "c.parquet"
    df.to_parquet(path)
    a, _ = read_comparisons(path)
    b, _ = read_comparisons(df)
    pd.testing.assert_frame_equal(canonical(a), canonical(b))
    assert a["line"].tolist() == b["line"].tolist() == list(range(1, len(df) + 1))
