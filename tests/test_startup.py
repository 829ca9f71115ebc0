"""Start-up: ``import evalkit`` and ``evalkit --help`` load no pandas, scipy or matplotlib; every
command's parser is built without importing its implementation (no timing: which modules load).

``scripts/bench_startup.py`` measures the time (``python -X importtime`` and paired ratios)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
HEAVY = ("pandas", "scipy", "matplotlib")


def _loaded(code: str) -> tuple[list[str], str]:
    """Which of :data:`HEAVY` (and numpy) ``code`` imported in a fresh interpreter, and its stdout."""
    full = (f"import sys\n{code}\n"
            "print('LOADED=' + ','.join(m for m in ('pandas', 'scipy', 'matplotlib', 'numpy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out, _, mods = proc.stdout.rpartition("LOADED=")
    return [m for m in mods.strip().split(",") if m], out


def test_import_evalkit_loads_no_heavy_module():
    loaded, _ = _loaded("import evalkit")
    assert not set(loaded) & set(HEAVY), loaded


def test_evalkit_help_imports_neither_pandas_nor_scipy_nor_matplotlib():
    loaded, out = _loaded(
        "import contextlib, io\nfrom evalkit.cli import main\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "print(buf.getvalue())")
    assert "usage: evalkit" in out and "rate" in out and "compare" in out  # the whole command list
    assert not set(loaded) & set(HEAVY), loaded
    assert "numpy" not in loaded  # the parser is argparse only


def test_every_commands_parser_is_built_without_its_implementation():
    """``build_parser()`` registers every command: its module's top level and ``register`` must stay
    argparse-only (heavy choices through :class:`evalkit.cli._choices.LazyChoices`)."""
    loaded, out = _loaded("from evalkit.cli import _COMMANDS, build_parser\nbuild_parser()\nprint(len(_COMMANDS))")
    assert int(out.strip()) >= 8
    assert loaded == [], loaded


@pytest.mark.parametrize("command", ["rate", "summary", "compare", "report", "curve"])
def test_a_commands_help_still_lists_its_choices(command, capsys):
    from evalkit.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser((command,)).parse_args([command, "--help"])
    text = capsys.readouterr().out
    assert f"usage: evalkit {command}" in text
    if command in ("compare", "report"):
        assert "{holm,bh,bonferroni,none}" in text  # the multiplicity methods, loaded for the help


def test_lazy_choices_check_values_like_a_list():
    from evalkit.cli import build_parser
    from evalkit.stats.multiplicity import MULTIPLICITY_METHODS
    from evalkit.stats.runs import RUN_TESTS

    parser = build_parser(("compare",))
    args = parser.parse_args(["compare", "a", "b", "--test", RUN_TESTS[-1], "--adjust", list(MULTIPLICITY_METHODS)[1]])
    assert (args.test, args.adjust) == (RUN_TESTS[-1], list(MULTIPLICITY_METHODS)[1])
    with pytest.raises(SystemExit):
        parser.parse_args(["compare", "a", "--test", "no-such-test"])


@pytest.mark.parametrize("container", ["csv", "parquet"])
def test_summary_of_a_small_file_loads_no_heavy_module(container, tmp_path):
    """``evalkit summary`` on a 10-row Arena file prints its table from numpy columns (no pandas, scipy
    or matplotlib), and the table is the one :func:`evalkit.summary.summarize` makes of the rows."""
    import pandas as pd

    from evalkit.io import read_comparisons
    from evalkit.summary import summarize

    rows = pd.DataFrame({"model_a": list("abacbcabca"), "model_b": list("bcbacabcab"),
                         "winner": ["model_a", "model_b", "tie", "model_a", "model_b", "model_a", "tie",
                                    "model_b", "model_a", "model_a"]})
    path = tmp_path / f"ten.{container}"
    rows.to_csv(path, index=False) if container == "csv" else rows.to_parquet(path, index=False)
    loaded, out = _loaded(f"from evalkit.cli import main\nmain(['summary', {str(path)!r}])")
    assert not set(loaded) & set(HEAVY), loaded
    ref = summarize(read_comparisons(path)[0])
    body = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| model")]
    assert [line.split("|")[1].strip() for line in body] == list(ref["model"])
    assert [int(line.split("|")[2]) for line in body] == ref["n"].tolist()
    assert [float(line.split("|")[6]) for line in body] == [round(x, 4) for x in ref["win_rate"]]
