"""Does the Bradley–Terry maximum-likelihood estimate exist? (Zermelo 1929; Ford 1957)

The MLE of a Bradley–Terry model exists and is unique (up to the centring) exactly when
the directed "beat-or-tie" graph is strongly connected: for every split of the players
into two groups, someone in each group beat or tied someone in the other. When it is
not, the likelihood keeps increasing as some strengths go to +/- infinity, and solvers
return whatever they stopped at (equal scores, or +/- 3000 Elo). This module finds the
offending models and says so.
"""

from __future__ import annotations

import numpy as np

from evalkit.ratings.counts import PairCounts

__all__ = [
    "beat_or_tie_edges",
    "strong_components",
    "divergent_models",
    "exists_batch",
    "check_existence",
]

_MAX_NAMES = 8
# Up to this many players a strongly connected graph is confirmed with dense numpy (no scipy import;
# a 4096 x 4096 boolean adjacency is 16 MB and a few ms of reachability).
_DENSE_MAX = 4096


def beat_or_tie_edges(counts: PairCounts, *, ties: str = "half") -> tuple[np.ndarray, np.ndarray]:
    """Directed edges ``winner -> loser`` of the beat-or-tie graph.

    A win of ``i`` over ``j`` is the edge ``i -> j``; a tie is an edge both ways unless
    ``ties="drop"``.
    """
    t = counts.ties if ties != "drop" else np.zeros_like(counts.ties)
    fwd = (counts.wins_i > 0) | (t > 0)
    bwd = (counts.wins_j > 0) | (t > 0)
    src = np.concatenate([counts.i[fwd], counts.j[bwd]])
    dst = np.concatenate([counts.j[fwd], counts.i[bwd]])
    return src, dst


def strong_components(counts: PairCounts, *, ties: str = "half") -> tuple[int, np.ndarray]:
    """Strongly connected components of the beat-or-tie graph (``n_components, labels``)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = counts.n_players
    src, dst = beat_or_tie_edges(counts, ties=ties)
    graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    return connected_components(graph, directed=True, connection="strong")


def divergent_models(counts: PairCounts, *, ties: str = "half") -> tuple[np.ndarray, np.ndarray]:
    """Models whose maximum-likelihood strength diverges, as index arrays ``(never_lose, never_win)``.

    ``never_lose``: members of strongly connected components that no outside model beat
    (or tied); ``never_win``: members of components that beat (or tied) no outside model.
    Both are empty exactly when the ratings exist. A player without comparisons is in both.
    """
    n_strong, labels = strong_components(counts, ties=ties)
    if n_strong == 1:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    src, dst = beat_or_tie_edges(counts, ties=ties)
    cross = labels[src] != labels[dst]
    has_out = np.zeros(n_strong, dtype=bool)
    has_in = np.zeros(n_strong, dtype=bool)
    has_out[labels[src[cross]]] = True
    has_in[labels[dst[cross]]] = True
    never_lose = np.flatnonzero(~has_in[labels])
    never_win = np.flatnonzero(~has_out[labels])
    return never_lose, never_win


def exists_batch(
    i: np.ndarray,
    j: np.ndarray,
    wins_i: np.ndarray,
    wins_j: np.ndarray,
    ties: np.ndarray,
    n: int,
    *,
    tie_edges: bool,
) -> np.ndarray:
    """For ``b`` replicates of pair counts (``(b, K)`` arrays), whether each has a finite MLE.

    One strongly-connected-components call on the block-diagonal union of the ``b`` graphs,
    built directly in CSR form (edges ordered by source, no sort).
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    b = wins_i.shape[0]
    tie = ties > 0 if tie_edges else np.zeros(ties.shape, dtype=bool)
    src_e = np.concatenate([i, j])
    dst_e = np.concatenate([j, i])
    order = np.argsort(src_e, kind="stable")
    present = np.concatenate([(wins_i > 0) | tie, (wins_j > 0) | tie], axis=1)[:, order]
    rep, e = np.nonzero(present)
    src = rep * n + src_e[order][e]
    dst = rep * n + dst_e[order][e]
    indptr = np.zeros(b * n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=b * n), out=indptr[1:])
    graph = csr_matrix((np.ones(len(dst), dtype=np.int8), dst, indptr), shape=(b * n, b * n))
    labels = connected_components(graph, directed=True, connection="strong")[1].reshape(b, n)
    return (labels == labels[:, :1]).all(axis=1)


def _strongly_connected_dense(counts: PairCounts, *, ties: str) -> bool:
    """Whether every player reaches every other in the beat-or-tie graph, by dense boolean
    reachability from player 0 forwards and backwards (numpy only; for a few hundred players)."""
    n = counts.n_players
    src, dst = beat_or_tie_edges(counts, ties=ties)
    adj = np.zeros((n, n), dtype=bool)
    adj[src, dst] = True
    for step in (adj, adj.T):
        seen = np.zeros(n, dtype=bool)
        seen[0] = True
        frontier = seen.copy()
        while frontier.any():
            new = step[frontier].any(axis=0) & ~seen
            seen |= new
            frontier = new
        if not seen.all():
            return False
    return True


def _names(players: tuple[str, ...], idx: np.ndarray) -> str:
    shown = [players[k] for k in idx[:_MAX_NAMES]]
    more = f" and {len(idx) - _MAX_NAMES} more" if len(idx) > _MAX_NAMES else ""
    return f"{shown}{more}"


def check_existence(counts: PairCounts, *, ties: str = "half") -> None:
    """Raise a ValueError naming the offending models when the ratings do not exist.

    Parameters
    ----------
    counts : PairCounts
    ties : {"half", "drop", "davidson"}
        How ties enter the likelihood; with ``"drop"`` they are not edges.

    Raises
    ------
    ValueError
        With fewer than two players; when the comparison graph falls into separate
        parts (names the parts); or when some models never lose (or never win) against
        the rest (names them). The message lists the remedies: an L2 prior
        (``l2=...``), dropping the named models, or fitting each component separately.
    """
    players = counts.players
    n = len(players)
    if 2 <= n <= _DENSE_MAX and _strongly_connected_dense(counts, ties=ties):
        return  # the ratings exist; the sparse graph code below names the models when they do not
    if n < 2:
        raise ValueError(
            f"Ratings need at least two players; got {n} ({list(players)}). "
            "Every comparison must be between two different models."
        )
    remedies = (
        "Remedies: add an L2 prior (e.g. fit_bt(..., l2=0.01), which shrinks the ratings and always exists), "
        "drop these models, or fit each component separately."
    )
    present = np.zeros(n, dtype=bool)
    used = counts.total > 0 if ties != "drop" else (counts.wins_i + counts.wins_j) > 0
    present[counts.i[used]] = True
    present[counts.j[used]] = True
    if not present.all():
        absent = np.flatnonzero(~present)
        raise ValueError(
            f"Ratings do not exist: {len(absent)} model(s) have no usable comparison "
            f"(ties={ties!r}): {_names(players, absent)}. {remedies}"
        )
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(int(used.sum())), (counts.i[used], counts.j[used])), shape=(n, n))
    n_weak, weak = connected_components(graph.tocsr(), directed=False)
    if n_weak > 1:
        parts = [np.flatnonzero(weak == c) for c in range(n_weak)]
        parts.sort(key=len)
        shown = "; ".join(_names(players, p) for p in parts[:4])
        raise ValueError(
            f"Ratings do not exist: the comparison graph falls into {n_weak} parts with no "
            f"comparison between them, so their ratings are not on a common scale. Smallest parts: {shown}. "
            f"{remedies}"
        )
    never_lose, never_win = divergent_models(counts, ties=ties)
    if len(never_lose) == 0 and len(never_win) == 0:
        return
    n_strong = strong_components(counts, ties=ties)[0]
    tie_note = " or tie" if ties != "drop" else ""
    raise ValueError(
        f"Ratings do not exist (the maximum-likelihood strengths diverge to +/- infinity): "
        f"model(s) {_names(players, never_lose)} never lose{tie_note} against the models outside their group, "
        f"and model(s) {_names(players, never_win)} never win{tie_note} against the models outside theirs "
        f"(the beat-or-tie graph has {n_strong} strongly connected components). {remedies}"
    )
