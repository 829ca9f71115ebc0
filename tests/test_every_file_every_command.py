"""Every file under tests/data through every command that reads files: it works (exit 0) or exits 2 with
one short error line; never exit 3 (an internal error, a traceback). In process (``evalkit.cli.main``),
so the whole loop stays within seconds.

The commands get the cheapest options that still run their whole path (no bootstrap replicates,
few permutations); output folders go to a temporary directory. Figures are built (every ``plot_*``
runs) but not rasterised: ``save_png`` writes a placeholder, because drawing the LLMFAO reports'
59-model figures takes most of the time and is tested where figures are the subject
(``tests/test_report.py``, ``tests/test_browser.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main

DATA = Path(__file__).parent / "data"
FILES = sorted(p for p in DATA.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _commands(f: Path, tmp: Path) -> list[list[str]]:
    return [
        ["summary", str(f)],
        ["score", str(f)],
        ["rate", str(f)],
        ["compare", str(f), "--n-resamples", "99", "--out", str(tmp / "c"), "--force"],
        ["curve", str(f), "--bootstrap", "0"],
        ["report", str(f), "--n-boot", "0", "--out", str(tmp / "r"), "--force"],
        ["report", "--traces", str(f), "--curve-bootstrap", "0", "--out", str(tmp / "t"), "--force"],
    ]


def test_the_loop_sees_the_harness_logs():
    names = {p.name for p in FILES}
    assert len(FILES) > 70
    assert {"log_formats.eval", "log_formats.json", "gpt-4_pair.jsonl.gz", "eval_results.json"} <= names


@pytest.mark.filterwarnings("ignore")
def test_no_command_exits_3_on_any_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    import evalkit.plots._fonts as fonts

    def placeholder(fig, path, **kwargs):  # build the figure, skip the rasterising (see the module docstring)
        Path(path).write_bytes(b"\x89PNG\r\n\x1a\n")
        return []

    monkeypatch.setattr(fonts, "save_png", placeholder)
    failures, long_errors, codes = [], [], {0: 0, 1: 0, 2: 0}
    for f in FILES:
        for argv in _commands(f, tmp_path):
            code = main(argv)
            err = capsys.readouterr().err
            codes[code] = codes.get(code, 0) + 1
            rel = f.relative_to(DATA)
            if code not in (0, 2):
                failures.append(f"{' '.join(argv[:1])} {rel}: exit {code}\n{err[-800:]}")
            elif code == 2:
                lines = [ln for ln in err.splitlines() if ": error:" in ln]
                if len(lines) != 1 or len(lines[0]) > 1500:
                    long_errors.append(f"{argv[0]} {rel}: {len(lines)} error line(s), {max(map(len, lines), default=0)} "
                                       f"chars: {lines[:1]!r:.300}")
    assert not failures, "\n\n".join(failures)
    assert not long_errors, "\n".join(long_errors)
    assert codes[0] > 50 and codes[2] > 50  # both outcomes occur: the loop exercises real reads and real refusals
