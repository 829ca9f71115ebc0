"""Shared by the agent-run tests: where the shipped Inspect logs are, and an independent reading of them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "agent_runs"
TRANSCRIPTS = Path(__file__).parent / "data" / "transcripts"


def direct_outcomes(log: Path) -> dict[str, tuple[float, str]]:
    """sample id -> (score, family) read straight from an Inspect .eval zip (json + zipfile only)."""
    try:
        import zipfile_zstd  # noqa: F401  (Inspect writes Zstandard members; Python >= 3.14 reads them natively)
    except ImportError:
        pass
    out = {}
    with zipfile.ZipFile(log) as z:
        for name in z.namelist():
            if name.startswith("samples/"):
                s = json.loads(z.read(name))
                out[str(s["id"])] = ({"C": 1.0, "I": 0.0}[s["scores"]["planted"]["value"]], s["metadata"]["family"])
    return out
