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


def test_progress_bar_only_on_a_terminal_and_not_when_quiet():
    def slow(*, progress, pause):
        for k in range(5):
            progress("bootstrap", k, 5)
            time.sleep(pause)
        progress("bootstrap", 5, 5)
        return 7

    for stream, quiet in ((io.StringIO(), False), (_Tty(), True)):  # piped, or --quiet: never drawn
        ui = UI("rate", quiet=quiet, stderr=stream)
        assert not ui.bars and call(ui, "bootstrap", slow, pause=0.05) == 7 and stream.getvalue() == ""
    piped = io.StringIO()  # piped with --verbose: one line per completed stage, for CI logs
    assert call(UI("rate", verbose=True, stderr=piped), "bootstrap", slow, pause=0.0) == 7
    assert piped.getvalue().startswith("bootstrap: 5/5 (") and piped.getvalue().count("\n") == 1
    stream = _Tty()  # a terminal: drawn once the step has lasted 2 s
    assert call(UI("rate", stderr=stream), "bootstrap", slow, pause=0.55) == 7
    assert "bootstrap" in stream.getvalue() and "5/5" in stream.getvalue()


def test_step_without_callbacks_shows_elapsed_time_on_a_terminal():
    stream = _Tty()
    ui = UI("demo", stderr=stream)
    assert call(ui, "fitting", lambda: time.sleep(2.6) or 3) == 3
    assert "fitting" in stream.getvalue()
