"""Check a `evalkit simulate reproduce` folder against the committed claim table and the README.

    python scripts/check_claims.py OUT_DIR

Exit 0 when OUT_DIR/claims.md is byte for byte data/sim/claims.md (the table the editable
install wrote and the repository commits) and its counts are the README's: rows holding and
evidence rows on seeds 0-2 and 7-9 (the "figures 2-10" table) and figure 11's rows held.
Exit 1 with the differences otherwise. CI runs it on the output of the installed wheel.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def counts(claims_md: str) -> dict[str, tuple[int, int]]:
    """``{"0-2": (held, evidence), "7-9": ..., "figure 11": (held, rows)}`` from a claims.md."""
    out = {}
    for held, _rows, group, ev in re.findall(
            r"^(\d+) of (\d+) rows hold on at least 2/3 of seeds ([0-9-]+); (\d+) of them are evidence", claims_md,
            flags=re.M):
        out[group] = (int(held), int(ev))
    fig11 = claims_md.split("## Figure 11", 1)
    if len(fig11) == 2:
        m = re.search(r"^(\d+) of (\d+) rows hold on at least 2/3 of the seeds", fig11[1], flags=re.M)
        if m:
            out["figure 11"] = (int(m.group(1)), int(m.group(2)))
    return out


def readme_counts(readme: str) -> dict[str, tuple[int, int]]:
    """The same counts as the README states them (its figures 2-10 table and figure 11 sentence)."""
    out = {}
    row = r"^\| seeds (\d+–\d+) \| \*{0,2}(\d+)\*{0,2} \| \*{0,2}(\d+)\*{0,2} \|$"
    for group, held, ev in re.findall(row, readme, flags=re.M):
        out[group.replace("–", "-")] = (int(held), int(ev))
    if re.search(r"Figure 11 holds\s+all six rows", readme) or "**all six rows hold" in readme:
        out["figure 11"] = (6, 6)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    got = (Path(argv[0]) / "claims.md").read_text(encoding="utf-8")
    committed = (ROOT / "data" / "sim" / "claims.md").read_text(encoding="utf-8")
    problems = []
    if got != committed:
        diff = difflib.unified_diff(committed.splitlines(), got.splitlines(), "data/sim/claims.md",
                                    f"{argv[0]}/claims.md", lineterm="", n=0)
        problems.append("claims.md differs from the committed data/sim/claims.md:\n" + "\n".join(list(diff)[:40]))
    have, want = counts(got), readme_counts((ROOT / "README.md").read_text(encoding="utf-8"))
    if set(want) != {"0-2", "7-9", "figure 11"}:
        problems.append(f"could not read the README's counts (found {want})")
    for key, value in want.items():
        if have.get(key) != value:
            problems.append(f"{key}: claims.md has {have.get(key)}, the README says {value}")
    if problems:
        print("check_claims: " + "\n".join(problems), file=sys.stderr)
        return 1
    print(f"check_claims: claims.md identical to data/sim/claims.md; counts {have} as in the README")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
