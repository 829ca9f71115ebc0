"""Issue 23 regressions for attacks that had no test yet: a CSV header over 4 kB (both engines
one answer), a 10^6-column header, a single-line CSV past the line limit (lowered with --limit so
that the test is cheap: the same check refuses a 1 GiB line at the default 16 MiB), a truncated
.eval inside a folder (a located error, never skipped), a folder of a few hundred small logs, and
two processes contending for one --out (the second fails, the first's folder is intact)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit._output import verify_dir
from evalkit.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_inputs as h  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROWS = ["a,b,left", "b,c,right", "a,c,left", "c,a,right", "b,a,left", "c,b,left"]


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_header_over_4_kB_is_the_same_answer_on_both_engines(tmp_path, capsys):
    extra = [f"annotation_column_with_a_rather_long_name_{i:03d}" for i in range(120)]
    header = ",".join(["left", "right", "winner", *extra])
    assert len(header) > 4096  # DuckDB's sniffer had called this "column 'c83' named twice"
    path = tmp_path / "long_header.csv"
    path.write_text(header + "\n" + "".join(r + "," + ",".join("x" * len(extra)) + "\n" for r in ROWS))
    results = {e: _cli(["rate", str(path), "--engine", e, "--json", "--n-resamples", "0"], capsys)
               for e in ("duckdb", "pandas")}
    assert [r[0] for r in results.values()] == [0, 0], results
    assert results["duckdb"][1] == results["pandas"][1]
    assert {m["model"] for m in json.loads(results["pandas"][1])} == {"a", "b", "c"}


def test_a_million_column_header_is_refused_naming_the_limit_on_both_engines(tmp_path, capsys):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n1,2,3\n")
    for engine in ("duckdb", "pandas"):
        code, _, err = _cli(["summary", str(path), "--engine", engine], capsys)
        assert code == 2 and "wide.csv" in err and "max_columns" in err and "Traceback" not in err, (engine, err)


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_a_single_line_past_the_line_limit_is_a_located_error(tmp_path, capsys, engine):
    """The 1 GiB single-line CSV of the audit, scaled down: a 200 kB line under --limit
    max_line_bytes=64k meets the same check as a 1 GiB line under the default 16 MiB."""
    path = tmp_path / "line.csv"
    path.write_bytes(b"left,right,winner\n" + b"a" * 200_000 + b",b,left\n" + b"a,b,right\n")
    code, _, err = _cli(["rate", str(path), "--engine", engine, "--limit", "max_line_bytes=64k"], capsys)
    assert code == 2 and "line.csv" in err and "line 2" in err and "max_line_bytes" in err, err
    one_line = tmp_path / "one_line.csv"  # no newline at all: the header itself is the long line
    one_line.write_bytes(b"left," * 40_000)
    code, _, err = _cli(["rate", str(one_line), "--engine", engine, "--limit", "max_line_bytes=64k"], capsys)
    assert code == 2 and "one_line.csv" in err and "max_line_bytes" in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["score", "compare"])
def test_a_truncated_eval_in_a_folder_is_a_located_error_never_skipped(tmp_path, capsys, command):
    runs = tmp_path / "runs"
    runs.mkdir()
    good = h.small_eval(runs / "a.eval", samples=4)
    (runs / "b.eval").write_bytes(good.read_bytes()[: good.stat().st_size // 2])  # a download cut in half
    argv = ["score", str(runs)] if command == "score" else ["compare", str(good), str(runs), "--out",
                                                            str(tmp_path / "o")]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and "b.eval" in err and "truncated" in err and "Traceback" not in err, err


def test_a_folder_of_many_small_logs_is_read_whole(tmp_path):
    """A few hundred small logs in one folder (the audit's 100k, scaled down): every file read,
    every session kept (per-file overhead: scripts/bench_many_files.py)."""
    from evalkit.io.logs import read_logs

    runs = tmp_path / "runs"
    runs.mkdir()
    n = 300
    for i in range(n):
        h.small_eval(runs / f"run{i:04d}.eval", model=f"m{i % 3}")  # 2 samples, scores 0 and 1
    table = read_logs(runs)
    assert len(table) == 2 * n and table["score"].sum() == n
    assert table.attrs["files"] == {"inspect": n} and table.attrs["skipped"] == []  # every file counted, none skipped


_SECOND = """
import sys
from evalkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock on a folder")
def test_two_processes_contending_for_one_out_the_second_fails_and_the_first_is_intact(tmp_path):
    """The test process plays the first run: it holds the --out lock (the parent folder's flock)
    while it puts its complete folder in place. The second run, a real `evalkit rate` process,
    starts its work, waits for the lock, finds the folder there and exits 2; the first's folder is
    byte-identical. Only events are waited for (the second's temporary folder appearing, the
    process ending), never a time."""
    from evalkit._output import atomic_output_dir

    data = tmp_path / "in.csv"
    data.write_text("left,right,winner\n" + "\n".join(ROWS * 3) + "\n")
    out = tmp_path / "o"
    work = tmp_path / "first"
    work.mkdir()
    with atomic_output_dir(work / "o", record={"run": "first"}) as d:  # the first run's folder, built aside
        (d.path / "result.txt").write_text("first")
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        second = subprocess.Popen([sys.executable, "-c", _SECOND, "rate", str(data), "--out", str(out), "-q",
                                   "--n-resamples", "10"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        while not list(tmp_path.glob(".o.partial-*")) and second.poll() is None:
            time.sleep(0.02)  # until the second run has started writing (no time limit: an event)
        assert second.poll() is None, second.communicate()[1]
        os.rename(work / "o", out)  # the first run's commit, under the lock
    except BaseException:
        second.kill()
        fcntl.flock(fd, fcntl.LOCK_UN)
        raise
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # the first run's lock is held until here: the second is waiting for it (or about to)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    _, err = second.communicate(timeout=600)
    assert second.returncode == 2 and "exists" in err and "Traceback" not in err, err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and verify_dir(out) == []
    assert json.loads((out / "run.json").read_text())["run"] == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first", "in.csv", "o"]  # the second's partial removed


def test_a_weight_column_in_left_right_tables_counts_on_both_engines(tmp_path, capsys):
    """A left,right,winner table with a weight column: the weight is used (it had been dropped
    silently), on both engines, and a row of weight 3 is the same as the row written 3 times."""
    weighted = tmp_path / "w.csv"
    weighted.write_text("left,right,winner,weight\n" + "".join(f"{r},{k}\n" for r, k in zip(ROWS, [3, 1, 1, 2, 1, 1],
                                                                                            strict=True)))
    repeated = tmp_path / "r.csv"
    repeated.write_text("left,right,winner\n" + "".join(f"{r}\n" * k for r, k in zip(ROWS, [3, 1, 1, 2, 1, 1],
                                                                                     strict=True)))
    answers = {}
    for engine in ("duckdb", "pandas"):
        for path in (weighted, repeated):
            for command in (["summary"], ["rate", "--n-resamples", "0"]):
                code, out, err = _cli([command[0], str(path), "--engine", engine, "--json", *command[1:]], capsys)
                assert code == 0, err
                answers[(engine, path.name, command[0])] = out
    for command in ("summary", "rate"):
        assert len({v for k, v in answers.items() if k[2] == command}) == 1, command  # 4 runs, one answer
    a = next(m for m in json.loads(answers[("pandas", "w.csv", "summary")]) if m["model"] == "a")
    assert a["n"] == 3 + 1 + 2 + 1  # a's rows: a,b (3), a,c (1), c,a (2), b,a (1)
    bad = tmp_path / "bad.csv"
    bad.write_text("left,right,winner,weight\na,b,left,-1\nb,a,left,1\n")
    for engine in ("duckdb", "pandas"):
        code, _, err = _cli(["summary", str(bad), "--engine", engine], capsys)
        assert code == 2 and "'weight'" in err and "line 2" in err, err


def test_iter_jsonl_reads_once_with_located_errors_and_the_limits(tmp_path):
    """The one JSON Lines loop of the readers (lm-eval samples, judge transcripts and events, the
    verdict log): blank lines skipped, CR/CRLF/LF line ends, gzip, an error naming file, line and
    column and what was expected, and the nesting limit before any line is parsed."""
    import gzip

    from evalkit.io._json import iter_jsonl
    from evalkit.io._limits import LimitError, read_limits

    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n{"a": 2}\r{"a": 3}\n')
    assert list(iter_jsonl(path, "a record")) == [(1, {"a": 1}), (3, {"a": 2}), (4, {"a": 3})]
    gz = tmp_path / "x.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    assert list(iter_jsonl(gz, "a record")) == list(iter_jsonl(path, "a record"))
    path.write_text('{"a": 1}\n{"a": 2,, "b": 3}\n')
    with pytest.raises(ValueError, match=r"x\.jsonl line 2, column 9 is not JSON .*expected a record\. Fix it"):
        list(iter_jsonl(path, "a record", advice="Fix it."))
    path.write_text('{"a": 1}\n' + "[" * 100 + "]" * 100 + "\n")
    with read_limits(max_depth=50), pytest.raises(LimitError, match="max_depth"):
        next(iter_jsonl(path, "a record"))  # refused before the first line is yielded
