"""Issue 23's fuzz suite (Deliver 6): hostile files and hostile names through every reader and
every command, from a fixed seed (hypothesis ``derandomize=True``, no deadline, no example
database), at least 2,000 cases per run.

- hostile files: a grammar of valid inputs of each format (comparison CSV/JSONL/JSON/Parquet,
  score and session tables, Inspect ``.eval`` archives, gzip) under mutations (truncation,
  random bytes, inserted bytes, CR-only lines, stray quotes and NULs, UTF-16, deep JSON, long
  lines, wide headers, zip and gzip bombs, zip headers that lie about sizes);
- hostile names: a grammar of HTML, Markdown, formulas, control and bidi characters,
  look-alikes, ANSI escapes and mathtext.

Asserted on every case: no exception but the ones the CLI turns into exit 2 (readers), no exit
3 and no traceback (commands, called in-process through ``main``), nothing written outside
``--out`` (each command case runs in a folder of its own), no raw control or bidi character on
the terminal, and no live content in the Markdown, HTML and CSV outputs. Memory: the bombs at
their full size (the audit's files) run in one subprocess under ``resource.setrlimit``, whose
peak RSS must stay under 1 GB. Readers and commands run with lowered ``--limit`` values so that
a bomb or a long line trips its limit in kilobytes rather than megabytes: the code path is the
same, the case is cheap. No timing is asserted anywhere.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from evalkit._escape import BIDI_CONTROLS  # noqa: E402
from evalkit.cli import main  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_inputs as h  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def fuzz(n: int) -> settings:
    """Fixed-seed settings for ``n`` cases: derandomised, no deadline, no database, no health checks
    (a slow case is not a failure)."""
    return settings(max_examples=n, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate, Phase.shrink))


# Lowered limits: a bomb trips max_ratio after 64 KiB of output, a line of 8 KiB is too long, a
# header of 300 columns too wide, JSON 60 deep too deep. Readers enforce them exactly as the defaults.
LOW = {"ratio_grace": 64 << 10, "max_ratio": 50, "max_line_bytes": 8 << 10, "max_columns": 300, "max_depth": 60,
       "max_bytes": 4 << 20}
LOW_FLAGS = [x for k, v in LOW.items() for x in ("--limit", f"{k}={v}")]

# --- hostile names -------------------------------------------------------------------------------

FRAGMENTS = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</td></tr><tr><td>", "&lt;b&gt;", "&amp;",
    "[click](javascript:alert(1))", "![x](http://evil.example/t.png)", "**bold**", "_em_", "`code`", "# head",
    "| pipe |", "- item", "1. item", "> quote", "~~s~~", "\\", "=SUM(A1:A9)", "+1", "-2+3", "@cmd", "\tx", "\rx",
    "\n", "\r\n", "\x00", "\x7f", "\x1b[2J", "\x1b]8;;http://e/\x07", "\u202e", "\u202d", "\u2066", "\u200f",
    "\u200b", "\ufeff", "\u2028", "café", "cafe\u0301", "аlpha", "alpha", "ﬁ", "Ａ", "$\\frac{$", "$x^2$", "\\$",
    "%s", "{0}", "'", '"', ",", ";", "模型甲", "😀", "\ud7ff", "a" * 40, " ", "",
]
NAME = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map("".join).filter(lambda s: s.strip() != "")
NAMES = st.lists(NAME, min_size=2, max_size=4, unique=True)

_LIVE_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f" + "".join(sorted(BIDI_CONTROLS)) + "]")


def _terminal_clean(text: str) -> None:
    """No raw control character (but newline and tab) and no bidi control reaches the terminal."""
    bad = _LIVE_TERMINAL.search(text)
    assert bad is None, f"raw {bad.group()!r} on the terminal: {text[max(0, bad.start() - 60):bad.end() + 20]!r}"


def _comparisons_csv(names: list[str], n: int = 3) -> bytes:
    """A valid left,right,winner table among ``names`` (everyone wins and loses once: ratings exist)."""
    from evalkit._csv import nul_escapechar

    buf = io.StringIO()  # Python 3.10's csv writes a NUL only with an escape character
    w = csv.writer(buf, lineterminator="\n", escapechar=nul_escapechar(any("\0" in n for n in names)))
    w.writerow(["model_a", "model_b", "winner"])
    for _ in range(n):
        for i, a in enumerate(names):
            b = names[(i + 1) % len(names)]
            w.writerow([a, b, "model_a"])
            w.writerow([a, b, "model_b"])
            w.writerow([a, b, "tie"])
    return buf.getvalue().encode("utf-8", "surrogatepass")


# --- hostile files -------------------------------------------------------------------------------

SAFE = ["a", "b", "c", "gpt-4", "m 1"]


def _base(kind: str, names: list[str]) -> tuple[str, bytes]:
    """A valid file of ``kind``: (suffix, bytes)."""
    rows = [(a, b, w) for a, b, w in zip(names, names[1:] + names[:1], ["model_a", "model_b", "tie"] * 3, strict=False)]
    rows = rows * 2 + [(b, a, "model_a") for a, b, _ in rows]
    if kind == "csv":
        return ".csv", _comparisons_csv(names)
    if kind == "jsonl":
        return ".jsonl", "".join(json.dumps({"model_a": a, "model_b": b, "winner": w}) + "\n"
                                 for a, b, w in rows).encode()
    if kind == "json":
        return ".json", json.dumps([{"model_a": a, "model_b": b, "winner": w} for a, b, w in rows]).encode()
    if kind == "scores":
        return ".csv", ("task,model,score\n" + "".join(f"t{i},{m},{(i + j) % 2}\n" for i in range(4)
                                                      for j, m in enumerate(names))).encode()
    if kind == "sessions":
        return ".csv", ("system,session,budget,score\n" + "".join(
            f"{m},{s},{b},{(s + b + j) % 3}\n" for j, m in enumerate(names) for s in range(3)
            for b in (1, 2, 4, 8))).encode()
    if kind == "runs":
        return ".jsonl", "".join(json.dumps({"system": m, "task": f"t{i}", "score": (i + j) % 2, "tokens": 10 + i,
                                             "cost": 0.1 * (i + 1), "minutes": 2 ** i}) + "\n"
                                 for j, m in enumerate(names) for i in range(4)).encode()
    if kind == "gz":
        return ".csv.gz", gzip.compress(_comparisons_csv(names), mtime=0)
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        buf = io.BytesIO()
        pq.write_table(pa.table({"model_a": [r[0] for r in rows], "model_b": [r[1] for r in rows],
                                 "winner": [r[2] for r in rows]}), buf)
        return ".parquet", buf.getvalue()
    if kind == "eval":
        buf = io.BytesIO()
        import zipfile

        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": names[0]}}))
            for i in range(3):
                z.writestr(f"samples/{i}_epoch_1.json", json.dumps({
                    "id": i, "epoch": 1, "input": "q", "scores": {"s": {"value": i % 2}},
                    "messages": [{"role": "assistant", "content": names[i % len(names)]}],
                    "events": [{"event": "model", "output": {"usage": {"input_tokens": 10, "output_tokens": 5}}}]}))
        return ".eval", buf.getvalue()
    raise AssertionError(kind)


def _zip_lying(names: list[str], claimed: int) -> bytes:
    """A .eval whose sample member's headers claim ``claimed`` bytes (it holds 256 KiB of zeros)."""
    data = h.deflate_zeros(256 << 10)
    header = json.dumps({"eval": {"task": "t", "model": names[0]}}).encode()
    members = [("header.json", 0, header, zlib.crc32(header), len(header)),
               ("samples/1_epoch_1.json", 8, data, zlib.crc32(bytes(256 << 10)), claimed)]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return h.write_zip(Path(d) / "x.eval", members).read_bytes()


MUTATIONS = ["none", "truncate", "flip", "insert", "random", "cr", "quote", "nul", "utf16", "deep", "longline",
             "wide", "bomb", "lie", "empty", "dupe"]


@st.composite
def hostile_files(draw: st.DrawFn, kinds: tuple[str, ...] = ("csv", "jsonl", "json", "scores", "sessions", "runs",
                                                               "gz", "parquet", "eval")) -> tuple[str, bytes, str]:
    """``(suffix, bytes, what was done)``: a valid file of some kind, then one mutation."""
    kind = draw(st.sampled_from(kinds))
    names = draw(st.one_of(st.just(SAFE[:3]), NAMES))
    suffix, data = _base(kind, names)
    how = draw(st.sampled_from(MUTATIONS))
    n = len(data)
    if how == "truncate":
        data = data[:draw(st.integers(0, max(n - 1, 0)))]
    elif how == "flip":
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, n - 1))
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
    elif how == "insert":
        i = draw(st.integers(0, n))
        data = data[:i] + draw(st.binary(min_size=1, max_size=64)) + data[i:]
    elif how == "random":
        data = draw(st.binary(min_size=0, max_size=512))
    elif how == "cr":
        data = data.replace(b"\r\n", b"\r").replace(b"\n", b"\r")
    elif how in ("quote", "nul"):
        i = draw(st.integers(0, n))
        data = data[:i] + (b'"' if how == "quote" else b"\x00") + data[i:]
    elif how == "utf16":
        data = data.decode("utf-8", "replace").encode(draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32"])))
    elif how == "deep":
        depth = draw(st.integers(30, 3000))
        data = h.deep_json(depth, kind=draw(st.sampled_from(["[", "{"]))).encode()
        if suffix in (".csv", ".csv.gz", ".parquet", ".eval"):
            suffix = draw(st.sampled_from([".json", ".jsonl"]))
    elif how == "longline":
        width = draw(st.integers(1 << 10, 40 << 10))
        data = data + b"x" * width + b",y,model_a\n"
    elif how == "wide":
        cols = draw(st.integers(2, 2000))
        data = (",".join(f"c{i}" for i in range(cols)) + "\n" + ",".join("1" * cols) + "\n").encode()
        suffix = ".csv"
    elif how == "bomb":
        size = draw(st.integers(256 << 10, 2 << 20))
        if suffix == ".eval":
            data = _eval_bomb(size)
        else:
            data = gzip.compress(bytes(size), mtime=0)
            suffix = draw(st.sampled_from([".csv.gz", ".jsonl.gz", ".json.gz"]))
    elif how == "lie":
        data = _zip_lying(names, draw(st.sampled_from([0, 1, 100, 1 << 31])))
        suffix = ".eval"
    elif how == "empty":
        data = draw(st.sampled_from([b"", b"\n", b"\xef\xbb\xbf", b"model_a,model_b,winner\n", b"[]", b"{}"]))
    elif how == "dupe":
        first, _, rest = data.partition(b"\n")
        data = first + b"," + first.split(b",")[0] + b"\n" + rest
    return suffix, data, f"{kind}/{how}"


def _eval_bomb(size: int) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return h.eval_bomb(Path(d) / "b.eval", n_blocks=max(size >> 17, 2)).read_bytes()


# exceptions a reader may raise: those the CLI reports in one line with exit 2
_CLEAN = (ValueError, OSError)


def _readers() -> dict[str, object]:
    from evalkit.io import read_agent_logs, read_comparisons, read_traces
    from evalkit.io._files import load_records
    from evalkit.io.logs import read_logs
    from evalkit.io.swe_bench import read_resolved_ids, read_swe_bench_report
    from evalkit.judge.transcripts import read_transcripts

    return {"read_comparisons": read_comparisons, "load_records": load_records, "read_traces": read_traces,
            "read_logs": read_logs, "read_agent_logs": read_agent_logs, "read_swe_bench_report": read_swe_bench_report,
            "read_resolved_ids": read_resolved_ids, "read_transcripts": read_transcripts}


READERS = _readers()
N_READER_CASES = 1400


def test_fuzz_every_reader_raises_only_clean_errors(tmp_path):
    """1,400 hostile files, each through one of the readers (seeded choice), under the lowered limits:
    a reader returns or raises ValueError/OSError (exit 2 in the CLI), nothing else."""
    from evalkit.io._limits import read_limits

    seen: list[str] = []
    path_of = {}

    @fuzz(N_READER_CASES)
    @given(case=hostile_files(), reader=st.sampled_from(sorted(READERS)))
    def one(case, reader):
        suffix, data, what = case
        path = path_of.setdefault(suffix, tmp_path / f"in{suffix}")
        path.write_bytes(data)
        seen.append(what)
        with warnings.catch_warnings(), read_limits(LOW):
            warnings.simplefilter("ignore")
            try:
                READERS[reader](path)
            except _CLEAN:
                pass
            except RecursionError as exc:  # never: deep JSON is refused before parsing
                raise AssertionError(f"{reader} on {what}: RecursionError") from exc

    one()
    assert len(seen) >= N_READER_CASES
    assert {w.split("/")[1] for w in seen} == set(MUTATIONS)  # every mutation was tried


# --- commands ----------------------------------------------------------------------------------

def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``main(argv)`` in ``cwd``; exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            code = main(argv)
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _judge_fn_file(root: Path) -> Path:
    path = root / "judge_fn.py"
    path.write_text("def judge(prompt):\n    return 'VERDICT: ' + 'ABT'[len(prompt) % 3]\n")
    return path


def _commands(path: Path, out: str, judge: Path) -> dict[str, list[str]]:
    f = path.name
    return {
        "summary/pandas": ["summary", f, "--json", "--engine", "pandas"],
        "summary/duckdb": ["summary", f, "--json", "--engine", "duckdb"],
        "rate/pandas": ["rate", f, "--json", "--engine", "pandas", "--n-resamples", "0"],
        "rate/duckdb": ["rate", f, "--json", "--engine", "duckdb", "--n-resamples", "0"],
        "score": ["score", f, "--json"],
        "compare": ["compare", f, f, "--json", "--out", out, "--n-resamples", "20"],
        "curve": ["curve", f, "--json", "--n-resamples", "0"],
        "horizon": ["horizon", f, "--json", "--n-resamples", "0"],
        "frontier": ["frontier", f, "--json", "--n-resamples", "0"],
        "report": ["report", f, "--out", out, "--n-resamples", "0", "--curve-n-resamples", "0"],
        "judge": ["judge", f, f, "--judge", f"python:{judge}:judge", "--out", out, "--budget", "4"],
        "demo": ["demo", "--real-data", f, "--out", out, "--tasks", "3", "--sessions", "2", "--n-resamples", "0"],
    }


N_COMMAND_CASES = 250


def test_fuzz_every_command_exits_0_or_2_and_writes_only_its_out(tmp_path):
    """250 hostile files, each through one command (every command is drawn), in-process: never
    exit 3 or a traceback; files appear only under --out; the terminal gets no raw control
    character. ``demo`` reads a file only through --real-data: it gets random bytes, so that it
    fails at the read (a valid judgment log would run the whole demo)."""
    judge = _judge_fn_file(tmp_path)
    seen: dict[str, int] = {}
    counter = [0]

    @fuzz(N_COMMAND_CASES)
    @given(case=hostile_files(), command=st.sampled_from(sorted(_commands(Path("x"), "o", judge))))
    def one(case, command):
        suffix, data, what = case
        if command == "demo":
            suffix, data, what = ".csv", bytes(range(256)) + data[:64], f"{what}+random"
        counter[0] += 1
        case_dir = tmp_path / f"case{counter[0]}"
        case_dir.mkdir()
        path = case_dir / f"in{suffix}"
        path.write_bytes(data)
        before = _tree(case_dir)
        argv = _commands(path, "out", judge)[command] + LOW_FLAGS
        code, out, err = _run(argv, case_dir)
        seen[command] = seen.get(command, 0) + 1
        assert code in (0, 2) and "Traceback" not in err, (command, what, code, err[-2000:])
        new = _tree(case_dir) - before
        assert all(p == "out" or p.startswith("out/") for p in new), (command, what, sorted(new))
        _terminal_clean(out + err)

    one()
    assert sum(seen.values()) >= N_COMMAND_CASES and set(seen) == set(_commands(Path("x"), "o", judge)), seen


# --- names ---------------------------------------------------------------------------------------

N_NAME_CASES = 350


def _md_rows(md: str) -> list[list[str]]:
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in md.splitlines() if line.startswith("|")]


def _markdown_clean(md: str) -> None:
    assert not BIDI_CONTROLS.intersection(md)
    assert not re.search(r"(?<!\\)\]\((?:javascript|https?|data):", md, flags=re.I)  # no live link or image
    own = re.sub(r'<a id="[a-z0-9-]+"></a>|</?details>|</?summary>', "", md)  # the report's own markup
    assert not re.search(r"(?<!\\)<[A-Za-z/!]", own)  # no raw HTML
    for block in re.split(r"\n\s*\n", md):  # every table keeps its column count
        rows = _md_rows(block)
        if rows:
            assert {len(r) for r in rows} == {len(rows[0])}, block


def _html_clean(page: str) -> None:
    from html.parser import HTMLParser

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.attrs: list[tuple[str, str, str | None]] = []
            self.scripts = 0

        def handle_starttag(self, tag, attrs):
            self.scripts += tag in ("script", "iframe", "object", "embed")
            self.attrs.extend((tag, k, v) for k, v in attrs)

    p = Tags()
    p.feed(page)
    assert not BIDI_CONTROLS.intersection(page)
    from evalkit.report.render import _SCRIPT

    assert p.scripts == len(re.findall(r"<script>", page)) == page.count(_SCRIPT) <= 1  # only the renderer's own
    assert not [a for a in p.attrs if a[1].startswith("on")]
    for _tag, key, value in p.attrs:
        if key in ("href", "src") and value:
            assert not value.lower().startswith(("javascript:", "data:", "http:", "https:", "//")), value


def _csv_rows(data: str) -> list[list[str]]:
    """The CSV's rows; Python 3.10's csv reader refuses a NUL ("line contains NUL"; 3.11 reads it), so
    NULs are read as a private-use stand-in and put back."""
    rows = csv.reader(io.StringIO(data.replace("\0", "\ue000")))
    return [[c.replace("\ue000", "\0") for c in r] for r in rows]


def _csv_clean(data: str, n_rows: int | None = None) -> None:
    rows = _csv_rows(data)
    if n_rows is not None:
        assert len(rows) == n_rows, rows
    for row in rows:
        for cell in row:
            if re.fullmatch(r"-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?|-?inf|nan", cell):
                continue
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_fuzz_names_reach_every_output_format_escaped(tmp_path):
    """350 sets of hostile names through the one escaping path of each output format: the Markdown
    table, the report's Markdown and HTML renderers (a key table and a tagged one), the CSV
    writer, the terminal label and the figure text."""
    import pandas as pd

    from evalkit._escape import label, markdown_table, plot_text
    from evalkit._output import write_csv
    from evalkit.report.document import Section, Table
    from evalkit.report.render import render_html, render_markdown

    count = [0]

    @fuzz(N_NAME_CASES)
    @given(names=NAMES)
    def one(names):
        count[0] += 1
        frame = pd.DataFrame({"model": names, "elo": [1000.0 + i for i in range(len(names))],
                              "note": [n[::-1] for n in names]})
        md = markdown_table(frame)
        _markdown_clean(md)
        assert len(_md_rows(md)) == len(names) + 2
        if count[0] % 5 == 1:  # the renderers cost ~50 ms a case: every fifth case (70 renders)
            section = Section("Ratings", (Table(frame, key=("model", "elo")), Table(frame, tag="note")))
            _markdown_clean(render_markdown("r", [section]))
            _html_clean(render_html("r", [section]))
        write_csv(frame, tmp_path / "t.csv")
        with open(tmp_path / "t.csv", encoding="utf-8", newline="") as fh:
            _csv_clean(fh.read(), n_rows=len(names) + 1)
        for n in names:
            _terminal_clean(label(n))
            shown = plot_text(n)
            assert not BIDI_CONTROLS.intersection(shown) and not re.search(r"(?<!\\)\$", shown), shown
            from evalkit._escape import html_text

            assert "<" not in html_text(n) and not _LIVE_TERMINAL.search(html_text(n))

    one()
    assert count[0] >= N_NAME_CASES


N_END_TO_END = 3


def test_fuzz_names_end_to_end_through_rate(tmp_path):
    """A few hostile name sets through a whole command (rate --out: CSV, Markdown, PNG), checking
    every file written and the terminal (report --out on hostile names: tests/test_hostile_names.py;
    the HTML path is fuzzed below through the renderer)."""
    count = [0]

    @fuzz(N_END_TO_END)
    @given(names=NAMES, command=st.just("rate"))
    def one(names, command):
        count[0] += 1
        case_dir = tmp_path / f"case{count[0]}"
        case_dir.mkdir()
        (case_dir / "in.csv").write_bytes(_comparisons_csv(names))
        argv = [command, "in.csv", "--out", "out", "--rng", "1"]
        argv += ["--n-resamples", "20"] if command == "rate" else ["--n-resamples", "20", "--curve-n-resamples", "0"]
        code, out, err = _run(argv, case_dir)
        assert code in (0, 2) and "Traceback" not in err, (names, err[-2000:])
        _terminal_clean(out + err)
        assert all(p == "out" or p.startswith("out/") for p in _tree(case_dir) - {"in.csv"})
        for f in (case_dir / "out").rglob("*"):
            if f.suffix == ".md":
                _markdown_clean(f.read_text())
            elif f.suffix == ".html":
                _html_clean(f.read_text())
            elif f.suffix == ".csv":
                with open(f, encoding="utf-8", newline="") as fh:
                    _csv_clean(fh.read())

    one()
    assert count[0] >= N_END_TO_END


# --- memory: the full-size bombs under setrlimit ------------------------------------------------

_BATCH = r"""
import io, contextlib, json, resource, sys, traceback
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from evalkit.cli import main
results = []
for line in sys.stdin:
    argv = json.loads(line)
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    except BaseException as exc:  # MemoryError outside main's handlers would land here
        code, err = 99, io.StringIO(traceback.format_exc())
    with open("/proc/self/status") as fh:
        hwm = int(next(x for x in fh if x.startswith("VmHWM:")).split()[1])
    results.append([argv, code, err.getvalue()[-500:], hwm])
print(json.dumps(results))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and VmHWM (Linux)")
def test_fuzz_full_size_bombs_in_one_process_under_setrlimit(tmp_path):
    """The audit's full-size attacks at the default limits, several commands each, in one process
    whose address space is capped by setrlimit (2 GiB: DuckDB and BLAS reserve virtual memory they
    never touch) and whose peak RSS (VmHWM, the maximum over all cases) must stay under 1 GB."""
    h.eval_bomb(tmp_path / "zstd.eval")  # 68 kB, 2.2 GB inside
    h.eval_bomb(tmp_path / "lies.eval", n_blocks=4000, claimed=100, method=8)
    h.small_eval(tmp_path / "ok.eval")
    h.gzip_bomb_members(tmp_path / "bomb.csv.gz", 4 << 30)
    h.gzip_bomb_members(tmp_path / "one.jsonl.gz", 1 << 30)
    (tmp_path / "deep.json").write_text(h.deep_json(100_000))
    (tmp_path / "deep.jsonl").write_text(h.deep_json(100_000, kind="{") + "\n")
    (tmp_path / "wide.csv").write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n")
    with open(tmp_path / "line.csv", "wb") as fh:  # one line of 20 MB (default limit 16 MiB)
        fh.write(b"model_a,model_b,winner\n" + b"a" * (20 << 20) + b",b,model_a\n")
    files = ["zstd.eval", "lies.eval", "bomb.csv.gz", "one.jsonl.gz", "deep.json", "deep.jsonl", "wide.csv",
             "line.csv"]
    cases = []
    for f in files:
        logs = f.endswith(".eval")
        for argv in ([["compare", "ok.eval", f, "--out", f"out-{f}"], ["score", f]] if logs else
                     [["summary", f], ["rate", f, "--engine", "pandas"], ["report", f, "--out", f"out-{f}"],
                      ["curve", f]]):
            cases.append(argv + ["-q"])
    proc = subprocess.run([sys.executable, "-c", _BATCH, str(2 << 30)], input="".join(json.dumps(c) + "\n"
                          for c in cases), capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert len(results) == len(cases)
    for argv, code, err, _ in results:
        assert code == 2 and "Traceback" not in err, (argv, code, err)
    peak_kb = max(r[3] for r in results)
    assert peak_kb < 1 << 20, f"peak RSS {peak_kb / 1024:.0f} MiB"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out-")) == []  # refused: no folder


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
@pytest.mark.parametrize("kind", ["[", "{"])
def test_every_reader_on_json_deeper_than_the_recursion_limit(tmp_path, suffix, kind):
    """Deterministic companion of the fuzz cases: JSON 5,000 deep (past Python's recursion limit,
    whatever the caller's stack) through every reader, at the default limits: clean errors only
    (the fuzz had found a format sniffer that parsed such a first line and raised RecursionError)."""
    path = tmp_path / f"deep{suffix}"
    path.write_text(h.deep_json(5000, kind=kind) + "\n")
    for name, reader in READERS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                reader(path)
            except _CLEAN:
                pass
            except RecursionError as exc:
                raise AssertionError(f"{name}: RecursionError") from exc


def _slow_markdown_table(frame, text, floatfmt: str = ".6g") -> str:
    """The per-cell renderer markdown_table had before its column fast path (its cell format
    included), as the reference the fast path must reproduce byte for byte."""
    import numpy as np
    import pandas as pd

    from evalkit._escape import distinct_labels

    def cell(value):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        if isinstance(value, (float, np.floating)):
            return format(float(value), floatfmt)
        return str(value)

    cols = list(frame.columns)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in cols]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = [list(frame[c]) if n else (distinct_labels(list(frame[c])) or list(frame[c]))
                for c, n in zip(cols, numeric, strict=True)]
    head = "| " + " | ".join(text(c) for c in cols) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"
    body = ["| " + " | ".join(text(cell(v)) for v in rec) + " |" for rec in zip(*data, strict=True)]
    return "\n".join([head, rule, *body]) + "\n"


def test_markdown_table_fast_path_is_the_per_cell_output_on_hostile_names():
    """The column fast path of markdown_table (plain printable ASCII skips the escaper) prints
    exactly what escaping every cell prints, for every escaper that declares a fast path and one
    that does not, on the fuzz suite's hostile names mixed with plain ones, NaN, None and numbers."""
    import numpy as np
    import pandas as pd

    from evalkit._escape import html_text, label, markdown_table, markdown_text
    from evalkit.cli._common import terminal_cell

    escapers = [label, markdown_text, html_text, terminal_cell, lambda v: f"<{v}>"]
    plain = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12)

    @fuzz(150)
    @given(names=st.lists(st.one_of(NAME, plain), min_size=1, max_size=8), seed=st.integers(0, 2**16),
           floatfmt=st.sampled_from([".6g", ".4g", ".2f"]))
    def one(names, seed, floatfmt):
        rng = np.random.default_rng(seed)
        n = len(names)
        values = rng.normal(0, 1e3, n)
        values[rng.random(n) < 0.3] = np.nan
        frame = pd.DataFrame({"model": names, "elo": values, "n": rng.integers(-5, 10**6, n),
                              "f32": values.astype(np.float32), "note": [None if i % 3 else "x|y" for i in range(n)],
                              "ok": rng.random(n) < 0.5})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for text in escapers:
                assert markdown_table(frame, text=text, floatfmt=floatfmt) == _slow_markdown_table(
                    frame, text, floatfmt), (text, names)

    one()
