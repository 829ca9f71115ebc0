"""Shared by the agent-run tests: where the shipped Inspect logs are, and an independent reading of them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "agent_runs"
TRANSCRIPTS = Path(__file__).parent / "data" / "transcripts"


def eval_samples(log: Path) -> list[dict]:
    """The samples of an Inspect .eval zip, read straight with json + zipfile."""
    try:
        import zipfile_zstd  # noqa: F401  (Inspect writes Zstandard members; Python >= 3.14 reads them natively)
    except ImportError:
        pass
    with zipfile.ZipFile(log) as z:
        return [json.loads(z.read(name)) for name in z.namelist() if name.startswith("samples/")]


def direct_outcomes(log: Path) -> dict[str, tuple[float, str]]:
    """sample id -> (score, family) read straight from an Inspect .eval zip (json + zipfile only)."""
    return {str(s["id"]): ({"C": 1.0, "I": 0.0}[s["scores"]["planted"]["value"]], s["metadata"]["family"])
            for s in eval_samples(log)}
