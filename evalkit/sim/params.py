"""The simulator's parameter set (:class:`SimParams`) and the bundled calibrated values.

A leaf of :mod:`evalkit.sim`: the generator, the policy and every experiment read their
defaults from here, and this module reads them from :mod:`evalkit.resources` (the packaged
``data/sim/calibrated.json``). A missing file is an error, never a silent fall-back to the
dataclasses' own defaults.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalkit.resources import calibrated_params
from evalkit.sim.generator import GeneratorParams
from evalkit.sim.policy import Policy

__all__ = ["SimParams", "calibrated", "load_params", "save_params"]

_SECTIONS = ("generator", "policy", "scheduling", "communication", "width_steps", "width_profile", "aggregate")


@dataclass(frozen=True)
class SimParams:
    """One parameter set for every figure: generator, policy (default: the post's rules),
    overheads, the width sweep's size and profile, and the speedup aggregator (fixed:
    ``"mean-curve"``, see the module docstring)."""

    generator: GeneratorParams = field(default_factory=GeneratorParams)
    policy: Policy = field(default_factory=Policy)
    scheduling: float = 0.05
    communication: float = 0.02
    width_steps: float = 740.0
    width_profile: str = "bell"
    aggregate: str = "mean-curve"

    def to_dict(self) -> dict[str, Any]:
        return {"generator": asdict(self.generator), "policy": asdict(self.policy), "scheduling": self.scheduling,
                "communication": self.communication, "width_steps": self.width_steps,
                "width_profile": self.width_profile, "aggregate": self.aggregate}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SimParams:
        return cls(GeneratorParams(**d.get("generator", {})), Policy(**d.get("policy", {})),
                   float(d.get("scheduling", 0.05)), float(d.get("communication", 0.02)),
                   float(d.get("width_steps", 740.0)), str(d.get("width_profile", "bell")),
                   str(d.get("aggregate", "mean-curve")))


def save_params(params: SimParams, path: str | os.PathLike, **extra: object) -> None:
    """Write ``params`` (and any ``extra`` documentation fields) as JSON."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({**extra, **params.to_dict()}, indent=2) + "\n")


@functools.lru_cache(maxsize=1)
def calibrated() -> SimParams:
    """The bundled calibrated parameter set (read once); the default of every entry point."""
    return load_params()


def load_params(path: str | os.PathLike | None = None) -> SimParams:
    """Read a parameter set (default: the calibrated set bundled with evalkit,
    :data:`evalkit.resources.CALIBRATED`; an error if it is missing, never a silent default)."""
    if path is None:
        d = calibrated_params()
    else:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"Parameter file {str(p)!r} does not exist.")
        d = json.loads(p.read_text())
    return SimParams.from_dict({k: d[k] for k in _SECTIONS if k in d})


