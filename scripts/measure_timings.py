"""Measure the README's timings on this machine: install, ``evalkit demo``, ``simulate reproduce``.

Each step runs the way a user runs it, from a clean copy of the repository (``git archive
HEAD``) in a fresh virtual environment: ``pip install -e .``, then ``evalkit demo --out ...``,
then ``evalkit simulate reproduce --out ...``. The machine's load average (``os.getloadavg``,
as ``uptime`` prints it) and CPU count are printed before and after each step, so a number
measured under load says so.

Usage::

    python scripts/measure_timings.py [--no-pip-cache] [--only demo,reproduce]

Prints a Markdown table (step, seconds, load before, load after).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _timed(name: str, cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, str]:
    before = _load()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"{name} failed with exit code {proc.returncode}")
    row = {"step": name, "seconds": f"{seconds:.1f}", "load before (1/5/15 min)": before, "load after": _load()}
    print(f"{name}: {seconds:.1f} s (load {before} -> {row['load after']})", file=sys.stderr, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="demo,reproduce", help="steps after the install (comma-separated)")
    ap.add_argument("--no-pip-cache", action="store_true", help="install without pip's cache (a first install)")
    args = ap.parse_args()
    steps = set(args.only.split(","))
    print(f"machine: {os.cpu_count()} CPUs; uptime load average at start: {_load()}", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="evalkit-timings-") as tmp:
        work = Path(tmp)
        src = work / "evalkit"
        src.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        venv = work / ".venv"
        env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
        cache = " --no-cache-dir" if args.no_pip_cache else ""
        install = ["bash", "-c", f"python3 -m venv {venv} && {venv}/bin/python -m pip install --quiet{cache} -e ."]
        rows.append(_timed("install (python3 -m venv + pip install -e .)", install, src, env))
        evalkit = str(venv / "bin" / "evalkit")
        if "demo" in steps:
            rows.append(_timed("evalkit demo", [evalkit, "demo", "--out", str(work / "demo"), "--quiet"], src, env))
        if "reproduce" in steps:
            rows.append(_timed("evalkit simulate reproduce", [evalkit, "simulate", "reproduce", "--out",
                                                               str(work / "repro"), "--quiet"], src, env))
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for r in rows:
        print("| " + " | ".join(r[c] for c in cols) + " |")
    print(f"\n{os.cpu_count()} CPUs; load average at the end: {_load()}")


if __name__ == "__main__":
    main()
