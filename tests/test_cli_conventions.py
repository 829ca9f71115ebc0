"""Conventions a user scripts against: exit codes, --json, --quiet, stdin, --encoding, progress
on stderr only on a terminal, warnings when they happen, remedies that name the CLI flag."""

import io
import json
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import cli_remedies, main
from evalkit.cli._common import UI, call

DATA = Path(__file__).parent / "data"
FOOD = DATA / "evalica" / "food.csv"


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_json_on_stdout_and_quiet_stderr(capsys):
    assert main(["rate", str(FOOD), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    table = pd.DataFrame(json.loads(out))
    ref = pd.read_csv(DATA / "evalica" / "food-golden.csv").query("algorithm == 'bradley_terry'")
    assert sorted(table["model"]) == sorted(ref["item"])  # one record per model of the input
    assert {"elo", "ci_low", "ci_high"} <= set(table.columns)


def test_stdin_dash_reads_the_same_as_the_file(monkeypatch, capsys):
    assert main(["summary", str(FOOD), "--json", "--quiet"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    _stdin(monkeypatch, FOOD.read_bytes())
    assert main(["summary", "-", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == from_file
    assert "<stdin>" in err and "evalkit-input-" not in err  # the user's name for it, not the spool file


def test_latin1_input_needs_encoding_and_the_error_says_so(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    path.write_bytes("left,right,winner\ncafé,thé,left\nthé,café,right\ncafé,thé,tie\n".encode("latin-1"))
    code = main(["summary", str(path)])
    err = capsys.readouterr().err
    if code == 2:  # the reader does not detect Latin-1 by itself: the message names file, line and flag
        assert "votes.csv" in err and "line 2" in err and "--encoding" in err
        assert "Traceback" not in err
    assert main(["summary", str(path), "--encoding", "latin-1", "--json", "--quiet"]) == 0
    assert sorted(r["model"] for r in json.loads(capsys.readouterr().out)) == ["café", "thé"]
    assert main(["summary", str(path), "--encoding", "no-such-codec"]) == 2
    assert "--encoding 'no-such-codec' is not a known text encoding" in capsys.readouterr().err


def test_utf16_input(tmp_path, capsys):
    path = tmp_path / "votes16.csv"
    path.write_bytes("left,right,winner\nα,β,left\nβ,α,right\n".encode("utf-16"))
    code = main(["summary", str(path), "--json", "--quiet"])
    out, err = capsys.readouterr()
    if code == 2:
        assert "--encoding utf-16" in err and "votes16.csv" in err
        assert main(["summary", str(path), "--encoding", "utf-16", "--json", "--quiet"]) == 0
        out = capsys.readouterr().out
    assert sorted(r["model"] for r in json.loads(out)) == ["α", "β"]


def test_remedies_name_the_cli_flag(tmp_path, capsys):
    msg = "Remedies: add an L2 prior (e.g. fit_bt(..., l2=0.01), which shrinks the ratings); or pass format='x'."
    out = cli_remedies(msg, frozenset({"--l2", "--format"}))
    assert out == msg + " On the command line: --l2 0.01, --format x."
    assert cli_remedies(msg, frozenset()) == msg  # no such flag: left as is
    # a log in which one model never loses: no maximum-likelihood ratings; the CLI names --l2
    path = tmp_path / "v.csv"
    path.write_text("left,right,winner\na,b,left\na,b,left\nb,c,left\nc,b,left\n")
    assert main(["rate", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit rate: error:") and err.count("\n") == 1  # one line
    assert err.rstrip().endswith("On the command line: --l2 0.01.")


def test_exit_codes(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "missing.csv")]) == 2
    assert main(["verify", str(tmp_path)]) == 1
    out = tmp_path / "r"
    assert main(["rate", str(FOOD), "--out", str(out), "--quiet"]) == 0
    assert main(["verify", str(out)]) == 0
    with pytest.raises(SystemExit) as exc:
        main(["rate", str(FOOD), "--ties", "nonsense"])
    assert exc.value.code == 2


def test_warnings_are_printed_when_they_happen(monkeypatch, capsys):
    import evalkit.cli.verify as verify

    seen = {}

    def fake_run(args):
        warnings.warn("first thing looks odd", UserWarning, stacklevel=1)
        seen["err_before_end"] = capsys.readouterr().err
        return 0

    monkeypatch.setattr(verify, "run", fake_run)
    assert main(["verify", "."]) == 0
    assert seen["err_before_end"] == "evalkit verify: warning: first thing looks odd\n"


def test_progress_bar_only_on_a_terminal_and_not_when_quiet(monkeypatch):
    def slow(*, progress):
        for k in range(5):
            progress("bootstrap", k, 5)
        progress("bootstrap", 5, 5)
        return 7

    monkeypatch.setenv("EVALKIT_PROGRESS_DELAY", "0")  # the documented knob: every bar at once, no timing
    for stream, quiet in ((io.StringIO(), False), (_Tty(), True)):  # piped, or --quiet: never drawn
        ui = UI("rate", quiet=quiet, stderr=stream)
        assert not ui.bars and call(ui, "bootstrap", slow) == 7 and stream.getvalue() == ""
    piped = io.StringIO()  # piped with --verbose: one line per completed stage, for CI logs
    assert call(UI("rate", verbose=True, stderr=piped), "bootstrap", slow) == 7
    assert piped.getvalue().startswith("bootstrap: 5/5 (") and piped.getvalue().count("\n") == 1
    stream = _Tty()  # a terminal: drawn
    assert call(UI("rate", stderr=stream), "bootstrap", slow) == 7
    assert "bootstrap" in stream.getvalue() and "5/5" in stream.getvalue()
    monkeypatch.setenv("EVALKIT_PROGRESS_DELAY", "2")  # the default: tqdm waits 2 s before drawing
    assert UI("rate", stderr=_Tty()).delay == 2.0
    monkeypatch.setenv("EVALKIT_PROGRESS_DELAY", "soon")  # not a number: the default
    assert UI("rate", stderr=_Tty()).delay == 2.0


def test_step_without_callbacks_shows_elapsed_time_on_a_terminal(monkeypatch):
    monkeypatch.setenv("EVALKIT_PROGRESS_DELAY", "0")
    stream = _Tty()
    ui = UI("demo", stderr=stream)

    def work() -> int:  # returns once the step's bar is on the "terminal" (no sleep-based timing)
        deadline = time.monotonic() + 60
        while "fitting" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        return 3

    assert call(ui, "fitting", work) == 3
    assert "fitting" in stream.getvalue()


def _stderr_of(cmd: list[str], *, tty: bool) -> str:
    """stderr of ``cmd`` run on a real pseudo-terminal (``tty``) or a pipe."""
    import os
    import subprocess

    env = dict(os.environ, EVALKIT_PROGRESS_DELAY="0", TERM="xterm")
    if not tty:
        return subprocess.run(cmd, capture_output=True, env=env, check=True).stderr.decode()
    master, slave = os.openpty()  # its size is never set (0 x 0): the bar must still draw
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait() == 0
    return b"".join(chunks).decode(errors="replace")


def test_bootstrap_of_2000_replicates_shows_a_bar_on_a_tty_and_none_piped():
    cmd = [sys.executable, "-m", "evalkit", "rate", str(FOOD), "--n-resamples", "2000", "--seed", "1"]
    on_tty = _stderr_of(cmd, tty=True)
    assert "bootstrap:" in on_tty and "2000/2000" in on_tty and "\r" in on_tty  # a tqdm bar, redrawn in place
    piped = _stderr_of(cmd, tty=False)
    assert "read 30 rows" in piped  # the notes are there ...
    assert "bootstrap:" not in piped and "\r" not in piped and "it/s" not in piped  # ... and no bar


def test_rate_prints_its_headline_before_the_leaderboard(capsys):
    """Issue 24: the headline comes first in rate's terminal output, as in compare's and report's."""
    assert main(["rate", str(Path(__file__).parents[1] / "data" / "llmfao" / "gpt4-comparisons.csv"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Headline\n- ")
    head, table = out.split("| rank |", 1)
    first_row = table.split("\n")[2].split("|")  # header, rule, then the best model's row
    assert first_row[1].strip() == "1" and f"- {first_row[2].strip()} leads 70 models" in head
    assert "rank interval is 1–" in head and "flagged preliminary" in head  # the leader, then the thin-row caveat


@pytest.mark.parametrize("verbose", [False, True])
def test_repeated_warnings_of_one_category_are_counted_after_three(monkeypatch, capsys, verbose):
    """A report with 30 per-task Wilson intervals warned 30 lines: the first 3 of a category are shown,
    the rest counted in one line at the end (every one with --verbose); other categories unaffected."""
    import evalkit.cli.summary as summary
    from evalkit.stats.proportions import WilsonCoverageWarning

    def noisy(args):
        for k in range(7):
            warnings.warn(f"Wilson interval of {k} of 4", WilsonCoverageWarning, stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(summary, "run", noisy)  # the parser is built in main(): `summary` runs `noisy`
    assert main(["summary", str(FOOD)] + (["--verbose"] if verbose else [])) == 0
    err = capsys.readouterr().err.splitlines()
    wilson = [ln for ln in err if "Wilson interval of" in ln]
    assert len(wilson) == (7 if verbose else 3) and any("something else" in ln for ln in err)
    held = [ln for ln in err if "more WilsonCoverageWarning warnings" in ln]
    assert held == ([] if verbose else ["evalkit summary: warning: 4 more WilsonCoverageWarning warnings "
                                        "(3 shown above; --verbose shows every one)"])
