"""Random-number plumbing: every random function takes ``rng`` and goes through here."""

from __future__ import annotations

import numpy as np

__all__ = ["RNGLike", "as_generator"]

RNGLike = int | np.random.Generator | np.random.SeedSequence


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence or numpy.random.Generator
        A seed or a generator. A generator is returned as is (its state is shared), so
        passing the same generator twice continues one stream.

    Raises
    ------
    ValueError
        If ``rng`` is None or of another type: evalkit never falls back to a global or
        unseeded random state.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed; got {rng}.")
        return np.random.default_rng(int(rng))
    raise ValueError(
        "rng must be an int seed, a numpy SeedSequence or a numpy Generator "
        f"(evalkit never uses a global random state); got {type(rng).__name__}."
    )
