"""Issue 23 regressions on hostile files: bombs, lying zip headers, deep JSON, symlink loops, CR-only
and unterminated-quote CSV on both engines. Memory is asserted from the child's peak RSS
(``VmHWM`` of a fresh interpreter), never from timing: a loaded machine cannot fail these."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_inputs as h  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PEAK_LIMIT_KB = 300 * 1024  # the bound for the bombs: 300 MB peak RSS


_CHILD = """
import sys
from evalkit.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as fh:  # VmHWM: peak RSS of this process image only (a fresh mm after exec;
    hwm = next(line for line in fh if line.startswith("VmHWM:"))  # ru_maxrss would inherit pytest's at fork)
open(sys.argv[1], "w").write(hwm.split()[1])
sys.exit(code)
"""


def _run_child(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """Run evalkit ARGS in a fresh interpreter; its exit code, stderr, and peak RSS in kB (VmHWM)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    peak = cwd / "peak_kb.txt"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(peak), *args], cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), int(peak.read_text())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is read from /proc (Linux)")
@pytest.mark.parametrize("kind", ["zstd eval bomb", "deflate eval, header lies", "gzip bomb"])
def test_bombs_exit_2_with_bounded_peak_memory(tmp_path, kind):
    if kind == "gzip bomb":
        bomb = h.gzip_bomb_members(tmp_path / "bomb.csv.gz", 4 << 30)  # 4 MB on disk, 4 GiB inside
        assert 4_000_000 < bomb.stat().st_size < 4_300_000
        args = ["summary", bomb.name]
    else:
        if kind == "zstd eval bomb":
            bomb = h.eval_bomb(tmp_path / "bomb.eval")  # 68 kB holding 2.2 GB (the audit's file)
            assert 60_000 < bomb.stat().st_size < 70_000
        else:
            bomb = h.eval_bomb(tmp_path / "bomb.eval", n_blocks=4000, claimed=100, method=8)  # claims 100 bytes
        h.small_eval(tmp_path / "ok.eval")
        args = ["compare", "ok.eval", bomb.name]
    code, err, peak_kb = _run_child(args, tmp_path)
    assert code == 2, err
    if kind == "deflate eval, header lies":  # refused from its headers, before anything is inflated
        assert "Traceback" not in err and "the header lies about the size" in err
    else:
        assert "Traceback" not in err and "bomb" in err and "--limit max_ratio" in err
    assert peak_kb < PEAK_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MiB"


class _CountingZlib:
    """``zlib`` for :mod:`evalkit.io._limits`, with every decompressobj's output counted: the bytes
    actually inflated, measured outside the code under test."""

    def __init__(self) -> None:
        self.inflated = 0

    def __getattr__(self, name: str):
        import zlib

        return getattr(zlib, name)

    def decompressobj(self, *args):
        import zlib

        inner, counter = zlib.decompressobj(*args), self

        class Counted:
            def decompress(self, data, max_length=0):
                out = inner.decompress(data, max_length)
                counter.inflated += len(out)
                return out

            def __getattr__(self, name):
                return getattr(inner, name)

        return Counted()


def _lying_eval(path: Path, *, claimed: int, local: int | None = None) -> tuple[Path, int]:
    """A .eval whose sample member holds 64 MiB of deflated zeros (about 64 kB compressed) while
    its central directory claims ``claimed`` bytes (``claimed=-1``: as many as it takes compressed)
    and its local header ``local`` (default: the same)."""
    data = h.deflate_zeros(64 << 20)
    claimed = len(data) if claimed == -1 else claimed
    h.write_zip(path, [h._stored("header.json", {"eval": {"task": "t", "model": "m"}}),
                       ("samples/1_epoch_1.json", 8, data, 0, claimed)])
    if local is not None:  # rewrite the sample member's local header's uncompressed size
        raw = bytearray(path.read_bytes())
        at = raw.index(b"PK\x03\x04", 4)  # the second local header
        raw[at + 22:at + 26] = local.to_bytes(4, "little")
        path.write_bytes(bytes(raw))
    return path, claimed


@pytest.mark.parametrize("case", ["claims 100 bytes", "claims its compressed size", "local header differs"])
def test_a_lying_zip_header_is_refused_after_inflating_at_most_its_claimed_size(tmp_path, monkeypatch, case):
    """The audit's lying .eval took ~3 s (1-2 GB inflated) before its error. Now a member whose
    declared size cannot hold its compressed data, or whose local header disagrees with the central
    directory, is refused before any byte is inflated; one whose claim is plausible stops one byte
    past it. Asserted on the bytes zlib produced (counted by a wrapper), not on time."""
    import evalkit.io._limits as limits_mod
    from evalkit.io.logs import read_logs

    claimed, local = {"claims 100 bytes": (100, None), "claims its compressed size": (-1, None),
                      "local header differs": (-1, 1 << 26)}[case]
    path, claimed = _lying_eval(tmp_path / "lies.eval", claimed=claimed, local=local)
    counting = _CountingZlib()
    monkeypatch.setattr(limits_mod, "zlib", counting)
    with pytest.raises(ValueError) as info:
        read_logs(path)
    message = str(info.value)
    assert "lies.eval (member 'samples/1_epoch_1.json')" in message and "tampered with" in message
    if case == "claims its compressed size":  # plausible on its face (about 1:1): stopped one byte past it
        assert 0 < counting.inflated <= claimed + 1 < 100 << 10, counting.inflated
        assert f"more than the {claimed} bytes its zip header claims" in message
    else:
        assert counting.inflated == 0 and "Nothing of it was decompressed" in message
    import json
    import zipfile

    counting.inflated = 0  # an honest deflated archive through the same counting zlib: read whole
    with zipfile.ZipFile(tmp_path / "ok.eval", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr("samples/1_epoch_1.json", json.dumps({"id": 1, "epoch": 1, "scores": {"s": {"value": 1}},
                                                         "pad": "x" * 50_000}))
        sizes = sum(i.file_size for i in z.infolist())
    assert len(read_logs(tmp_path / "ok.eval")) == 1 and counting.inflated == sizes


def test_deep_json_is_a_located_error_not_a_recursion_error(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text(h.deep_json(100_000))
    assert main(["rate", str(deep)]) == 2
    err = capsys.readouterr().err
    assert "more than 200 deep (line 1, byte 201)" in err and "--limit max_depth=N" in err
    (tmp_path / "deep.jsonl").write_text('{"a": 1}\n' + h.deep_json(50_000, kind="{") + "\n")
    assert main(["rate", str(tmp_path / "deep.jsonl")]) == 2
    assert "line 2" in capsys.readouterr().err


def test_a_folder_with_a_symlink_loop_is_walked_once(tmp_path, capsys):
    runs = tmp_path / "runs"
    (runs / "a").mkdir(parents=True)
    h.small_eval(runs / "a" / "one.eval", model="m1")
    (runs / "a" / "loop").symlink_to(runs, target_is_directory=True)  # runs/a/loop -> runs
    from evalkit.io._walk import glob_files, walk_files

    assert [p.name for p in walk_files(runs)] == ["one.eval"]
    assert [p.name for p in glob_files(str(runs / "**" / "*.eval"))] == ["one.eval"]


def _csv_rate(path: Path, engine: str, capsys) -> tuple[int, str]:
    code = main(["rate", str(path), "--engine", engine, "--json"])
    out = capsys.readouterr()
    return code, (out.out if code == 0 else out.err)


def test_cr_only_csv_reads_the_same_on_both_engines(tmp_path, capsys):
    rows = ["left,right,winner", "a,b,left", "b,c,right", "a,c,left", "c,a,right", "b,a,left"]
    lf = tmp_path / "lf.csv"
    lf.write_text("\n".join(rows) + "\n")
    cr = tmp_path / "mac.csv"
    cr.write_bytes(("\r".join(rows) + "\r").encode())  # Excel's "CSV (Macintosh)"
    results = {(e, p.name): _csv_rate(p, e, capsys) for e in ("duckdb", "pandas") for p in (lf, cr)}
    assert {code for code, _ in results.values()} == {0}
    assert len({text for _, text in results.values()}) == 1  # one answer, whatever the engine or line ends


def test_unterminated_quote_is_the_same_error_on_both_engines(tmp_path, capsys):
    bad = tmp_path / "q.csv"
    bad.write_text('left,right,winner\na,b,left\n"beta,c,right\na,c,left\n')
    for engine in ("duckdb", "pandas"):
        code, err = _csv_rate(bad, engine, capsys)
        assert code == 2 and "q.csv" in err and "Traceback" not in err, (engine, err)  # no invented player "beta


def test_random_bytes_exit_2_on_every_engine(tmp_path, capsys):
    import numpy as np

    junk = tmp_path / "junk.csv"
    junk.write_bytes(np.random.default_rng(23).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    for engine in ("duckdb", "pandas"):
        code, err = _csv_rate(junk, engine, capsys)
        assert code == 2 and "junk.csv" in err and "Traceback" not in err, (engine, err)


@pytest.mark.parametrize("column", [[["a"], ["b"], ["a"]], [b"a", b"b", b"a"], [{"n": "a"}, {"n": "b"}, {"n": "a"}]],
                         ids=["list", "binary", "struct"])
def test_non_scalar_player_columns_are_refused_the_same_on_both_engines(tmp_path, capsys, column):
    import pandas as pd

    path = tmp_path / "p.parquet"
    pd.DataFrame({"left": column, "right": ["b", "c", "c"], "winner": ["left", "right", "left"]}).to_parquet(path)
    errors = {engine: _csv_rate(path, engine, capsys) for engine in ("duckdb", "pandas")}
    assert {code for code, _ in errors.values()} == {2}
    assert errors["duckdb"][1] == errors["pandas"][1]
    assert "must hold text or numbers" in errors["pandas"][1] and "p.parquet" in errors["pandas"][1]


def test_weights_past_2_to_the_53_are_refused_with_the_reason_on_both_engines(tmp_path, capsys):
    path = tmp_path / "w.csv"
    path.write_text("player_a,player_b,outcome,weight\na,b,1,9.3e18\nb,c,0,9.3e18\na,c,1,1\nc,a,0.5,1\n")
    errors = {engine: _csv_rate(path, engine, capsys) for engine in ("duckdb", "pandas")}
    assert {code for code, _ in errors.values()} == {2}
    assert errors["duckdb"][1] == errors["pandas"][1]
    assert "sums to 1.86e+19, more than 2^53" in errors["pandas"][1] and "-9223372036854775808" not in errors["pandas"][1]


def test_scores_of_1e300_are_refused_not_given_p_1(tmp_path, capsys):
    path = tmp_path / "sc.csv"
    path.write_text("system,item,score\na,1,1e300\na,2,-1e300\nb,1,0.5\nb,2,0.2\n")
    assert main(["report", "--scores", str(path), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert "magnitude at most 1e+100" in err and "first at line 2" in err and "sc.csv" in err
    assert not (tmp_path / "rep").exists()


def test_the_limit_flag_named_in_the_errors_exists_and_raising_depth_past_the_parser_is_exit_2(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text(h.deep_json(300))
    assert main(["rate", str(deep)]) == 2
    assert "more than 200 deep" in capsys.readouterr().err
    assert main(["rate", str(deep), "--limit", "max_depth=500"]) == 2  # past the depth check: not a table
    assert "deep" not in capsys.readouterr().err.split("error:")[1][:40]
    deep.write_text(h.deep_json(100_000))
    assert main(["rate", str(deep), "--limit", "max_depth=200000"]) == 2  # not a RecursionError (exit 3)
    assert "deeper than Python's JSON parser can follow" in capsys.readouterr().err
    assert main(["rate", str(deep), "--limit", "max_dept=5"]) == 2
    assert "Unknown read limit(s) ['max_dept']" in capsys.readouterr().err


def test_random_bytes_on_stdin_exit_2_on_every_engine(monkeypatch, capsys):
    """The audit's case: random bytes on stdin exited 3. Now a one-line error (exit 2) naming
    <stdin>, on both engines and in summary."""
    import io

    import numpy as np

    junk = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    for argv in (["rate", "-", "--engine", "duckdb"], ["rate", "-", "--engine", "pandas"], ["summary", "-"]):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(junk)))
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "<stdin>" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_csv_gz_past_max_bytes_is_the_same_clean_error_in_summary_rate_and_report(tmp_path, capsys):
    """The audit's 1 GiB .csv.gz worked in summary but ran out of memory in report. Scaled down
    (2.8 MB of genuine comparisons, 10:1 compressed, under --limit max_bytes=1M): every command
    refuses it alike, exit 2, naming the limit and the flag; none reads it whole into memory."""
    import gzip
    import random

    r = random.Random(1)
    models = [f"model-{i}" for i in range(20)]
    rows = [f"{a},{b},{r.choice(['model_a', 'model_b', 'tie'])}" for a, b in (r.sample(models, 2) for _ in range(120_000))]
    data = tmp_path / "big.csv.gz"
    data.write_bytes(gzip.compress(("model_a,model_b,winner\n" + "\n".join(rows) + "\n").encode(), mtime=0))
    for argv in (["summary"], ["rate", "--n-resamples", "0"], ["report", "--out", str(tmp_path / "r")]):
        assert main([argv[0], str(data), *argv[1:], "--limit", "max_bytes=1M", "-q"]) == 2, argv
        err = capsys.readouterr().err
        assert "big.csv.gz decompresses to more than 1 MiB" in err and "--limit max_bytes=SIZE" in err, err
    assert not (tmp_path / "r").exists()
