"""The data files that ship with evalkit, read through :mod:`importlib.resources`.

The repository's top-level ``data/`` folder is the one copy of these files: the package holds
it as ``evalkit/_data`` (a link to ``../data`` in the source tree, real files in a wheel), so an
editable checkout and an installed wheel read the same bytes. Shipped (see ``pyproject.toml``):

* ``sim/calibrated.json`` - the simulator's calibrated parameter set (every default);
* ``llmfao/*.csv`` - LLMFAO's crowd and GPT judge votes (CC BY 4.0; the demo rates the crowd's);
* ``alpaca_eval/*.csv.gz`` - AlpacaEval 1 and 2 preferences (Apache-2.0);
* ``seed002/scores.csv`` - the table that reproduces seed 002's summaries;
* ``agent_runs/`` - two systems x six Inspect runs (``evalkit compare`` / ``curve``);
* the ``README.md`` of each folder, with sources and licences.

A missing file is an error (:class:`ResourceNotFoundError`), never a silent default. This
module imports nothing from evalkit: parameters and data load from here, below everything.
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

__all__ = ["ResourceNotFoundError", "data_file", "read_json", "calibrated_params", "CALIBRATED"]

#: The simulator's calibrated parameter set, relative to the data folder.
CALIBRATED = "sim/calibrated.json"


class ResourceNotFoundError(FileNotFoundError):
    """A data file that should ship with evalkit is not there (a broken or partial install)."""


def _root() -> Traversable:
    return resources.files("evalkit").joinpath("_data")


def _resource(name: str) -> Traversable:
    parts = [p for p in name.replace("\\", "/").split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise ValueError(f"A data file is named relative to evalkit's data folder, e.g. 'llmfao/crowd-comparisons.csv';"
                         f" got {name!r}.")
    node = _root().joinpath(*parts)
    if not node.is_file():
        raise ResourceNotFoundError(
            f"evalkit's bundled data file {name!r} is missing from this installation ({_root()}). "
            "Reinstall evalkit (pip install --force-reinstall evalkit), or pass the file's path explicitly.")
    return node


def data_file(name: str) -> Path:
    """The path of a bundled data file, e.g. ``data_file("llmfao/crowd-comparisons.csv")``.

    ``name`` is relative to the repository's ``data/`` folder. Raises
    :class:`ResourceNotFoundError` when the file is not installed.

    Examples
    --------
    >>> from evalkit.resources import data_file
    >>> data_file("seed002/scores.csv").name
    'scores.csv'
    """
    node = _resource(name)
    if not isinstance(node, os.PathLike):  # a zipped install: no file on disk to hand to a reader
        raise ResourceNotFoundError(f"evalkit's data file {name!r} is inside an archive ({node}); install evalkit "
                                    "unzipped (pip does) to read it by path.")
    return Path(os.fspath(node))


def read_json(name: str) -> Any:
    """A bundled JSON file, parsed."""
    return json.loads(_resource(name).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _calibrated_text() -> str:
    return _resource(CALIBRATED).read_text(encoding="utf-8")


def calibrated_params() -> dict[str, Any]:
    """The calibrated parameter set as a fresh dict (``generator``, ``policy``, overheads, width
    sweep, ``aggregate``, and documentation fields), read once per process."""
    out = json.loads(_calibrated_text())
    if not isinstance(out, dict) or "generator" not in out:
        raise ResourceNotFoundError(f"evalkit's {CALIBRATED} is not a parameter set (no 'generator' section).")
    return out
