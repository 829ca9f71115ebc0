#!/usr/bin/env bash
# Part of .ci/run: the jobs a new user runs, from the installed wheel, in a folder outside the checkout.
# Needs OUTSIDE (an empty folder) and ROOT (the checkout, read only for its scripts and committed tables);
# `evalkit` and `python` are the wheel venv's.
set -euo pipefail
cd "$OUTSIDE"
python - <<'PY'
import evalkit, pathlib, sys
where = pathlib.Path(evalkit.__file__).resolve()
assert "site-packages" in where.parts, f"evalkit imported from {where}, not from the installed wheel"
print(f"ci: evalkit {evalkit.__version__} from {where.parent}", file=sys.stderr)
PY
data() { python -c "from evalkit.resources import data_file; print(data_file('$1'))"; }

evalkit demo --out demo --quiet >/dev/null
evalkit verify demo >/dev/null
test -s demo/report.html && test -s demo/real/report.html

evalkit simulate reproduce --out repro --quiet >/dev/null
python "$ROOT/scripts/check_claims.py" repro

evalkit report "$(data alpaca_eval/alpaca_eval_gpt4__vs_text_davinci_003__preferences.csv.gz)" --out ae1 --quiet \
    >/dev/null
evalkit verify ae1 >/dev/null
runs=$(dirname "$(data agent_runs/truth.csv)")
evalkit compare "$runs/baseline" "$runs/candidate" --cluster family --out runs-report --quiet >/dev/null
evalkit verify runs-report >/dev/null

python "$ROOT/scripts/readme_examples.py" "$ROOT/README.md"
python "$ROOT/scripts/five_jobs.py" --out five-jobs
