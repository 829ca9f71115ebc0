"""Which pairs of a task's transcripts to judge next: all of them, Swiss rounds, or actively.

Every policy proposes *unordered* pairs not judged yet (each pair is judged once, in both orders by
default: a deterministic judge asked the same prompt twice answers the same, so a repeat would buy
nothing). Policies are deterministic given their seed and the verdicts so far, so a resumed run
proposes the same pairs and reuses the logged verdicts.

* :class:`AllPairs` - every pair, in a seeded random order (``n (n - 1) / 2`` pairs).
* :class:`SwissPairs` - Swiss rounds: transcripts sorted by their score so far, neighbours who have
  not met are paired; each round is one batch. The n-1 rounds of a full Swiss tournament end at all
  pairs.
* :class:`ActivePairs` - for a top-k question (seed 002: rank 18 samples, keep the top 15): a Laplace
  approximation of the Bradley–Terry posterior (Gaussian prior, precision ``prior_precision``), and
  the next pair is the one with the largest *expected information about the top-k set*: the drop in
  ``sum_m H(P(m in top k))`` (binary entropy, ``P = Phi((theta_m - b) / sd)`` with ``b`` the midpoint
  between the k-th and (k+1)-th estimates and ``sd`` the posterior SD of ``theta_m - b``) that the pair's
  two judgements would bring (the rank-one update of the posterior covariance by their Fisher
  information ``2 p (1 - p)``). It starts with two random rounds (every transcript judged twice) and stops
  by itself when every transcript's membership probability is beyond ``settle`` (default 0.99) either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import expit
from scipy.stats import norm

__all__ = ["PairResults", "AllPairs", "SwissPairs", "ActivePairs", "make_policy", "POLICIES", "laplace_bt"]

POLICIES = ("all", "swiss", "active")
#: (i, j) with i < j -> the scores of i in each judgement of the pair (1 win, 0.5 tie, 0 loss)
PairResults = Mapping[tuple[int, int], Sequence[float]]


def _unjudged(n: int, results: PairResults) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in results]


def _scores(n: int, results: PairResults) -> np.ndarray:
    won, played = np.zeros(n), np.zeros(n)
    for (i, j), ys in results.items():
        for y in ys:
            won[i] += y
            won[j] += 1 - y
            played[i] += 1
            played[j] += 1
    return np.divide(won, played, out=np.full(n, 0.5), where=played > 0)


class AllPairs:
    """Every pair once, in a seeded random order (one batch: as parallel as the concurrency allows)."""

    name = "all"

    def __init__(self, n: int, *, rng: np.random.Generator) -> None:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        self.order = [pairs[k] for k in rng.permutation(len(pairs))]

    def next_batch(self, results: PairResults, size: int) -> list[tuple[int, int]]:
        return [p for p in self.order if p not in results]


class SwissPairs:
    """Swiss rounds: sort by score so far (ties broken by a seeded shuffle), pair neighbours not yet met."""

    name = "swiss"

    def __init__(self, n: int, *, rng: np.random.Generator) -> None:
        self.n = n
        self.tiebreak = rng.permutation(n)

    def next_batch(self, results: PairResults, size: int) -> list[tuple[int, int]]:
        score = _scores(self.n, results)
        order = sorted(range(self.n), key=lambda i: (-score[i], self.tiebreak[i]))
        free, batch = list(order), []
        while len(free) > 1:
            i = free.pop(0)
            partner = next((j for j in free if (min(i, j), max(i, j)) not in results), None)
            if partner is None:
                continue
            free.remove(partner)
            batch.append((min(i, j := partner), max(i, j)))
        if not batch:  # the remaining unmet pairs cannot form a round among neighbours: play them
            batch = _unjudged(self.n, results)
        return batch


def laplace_bt(n: int, results: PairResults, *, prior_precision: float = 0.1,
               theta0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """MAP Bradley–Terry strengths with a N(0, 1/prior_precision) prior, and the inverse of the
    negative Hessian there (the Laplace covariance). Ties count as half a win (a fractional outcome)."""
    pairs = [(i, j, y) for (i, j), ys in results.items() for y in ys]
    theta = np.zeros(n) if theta0 is None else theta0.copy()
    if not pairs:
        return theta, np.eye(n) / prior_precision
    ii = np.array([p[0] for p in pairs])
    jj = np.array([p[1] for p in pairs])
    yy = np.array([p[2] for p in pairs], dtype=float)
    for _ in range(50):
        p = expit(theta[ii] - theta[jj])
        r = yy - p
        grad = np.bincount(ii, r, n) - np.bincount(jj, r, n) - prior_precision * theta
        w = p * (1 - p)
        h = np.zeros((n, n))
        np.add.at(h, (ii, jj), -w)
        h = h + h.T
        np.fill_diagonal(h, np.bincount(ii, w, n) + np.bincount(jj, w, n))
        h[np.diag_indices(n)] += prior_precision
        step = np.linalg.solve(h, grad)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-8:
            break
    p = expit(theta[ii] - theta[jj])
    w = p * (1 - p)
    h = np.zeros((n, n))
    np.add.at(h, (ii, jj), -w)
    h = h + h.T
    np.fill_diagonal(h, np.bincount(ii, w, n) + np.bincount(jj, w, n) + prior_precision)
    return theta, np.linalg.inv(h)


def _binary_entropy(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return -(q * np.log(q) + (1 - q) * np.log1p(-q))


class ActivePairs:
    """The pair with the largest expected information about the top-k set (see the module notes)."""

    name = "active"

    def __init__(self, n: int, *, k: int, rng: np.random.Generator, prior_precision: float = 0.1,
                 settle: float = 0.99, warmup_rounds: int = 2, calls_per_pair: int = 2, max_repeats: int = 1) -> None:
        if not 0 < k < n:
            raise ValueError(f"top_k must be between 1 and {n - 1} for a task of {n} transcripts; got {k}.")
        self.n, self.k = n, k
        self.prior_precision, self.settle = prior_precision, settle
        self.calls_per_pair = calls_per_pair
        self.max_repeats = max_repeats
        self.warmup = self._warmup(n, warmup_rounds, rng)
        self.theta = np.zeros(n)
        self.membership = np.full(n, 0.5)

    @staticmethod
    def _warmup(n: int, rounds: int, rng: np.random.Generator) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for _ in range(rounds):
            perm = rng.permutation(n)
            for a in range(0, n - 1, 2):
                i, j = int(perm[a]), int(perm[a + 1])
                p = (min(i, j), max(i, j))
                if p not in out:
                    out.append(p)
            if n % 2:  # the odd one out meets the first of the round
                p = (min(int(perm[-1]), int(perm[0])), max(int(perm[-1]), int(perm[0])))
                if p not in out:
                    out.append(p)
        return out

    def _posterior(self, results: PairResults) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray]:
        theta, cov = laplace_bt(self.n, results, prior_precision=self.prior_precision, theta0=self.theta)
        self.theta = theta
        order = np.argsort(-theta, kind="stable")
        kth, nxt = int(order[self.k - 1]), int(order[self.k])
        c = np.eye(self.n)
        c[:, kth] -= 0.5
        c[:, nxt] -= 0.5
        b = 0.5 * (theta[kth] + theta[nxt])
        return theta, cov, c, b, c @ cov

    def next_batch(self, results: PairResults, size: int) -> list[tuple[int, int]]:
        warm = [p for p in self.warmup if p not in results]
        if warm:
            return warm
        per = self.calls_per_pair
        cand = [(i, j) for i in range(self.n) for j in range(i + 1, self.n)
                if len(results.get((i, j), ())) < per * self.max_repeats]
        if not cand:
            return []
        theta, cov, c, b, a = self._posterior(results)
        var = np.einsum("ij,ij->i", a, c)  # diag(C Sigma C^T)
        sd = np.sqrt(np.maximum(var, 1e-300))
        self.membership = norm.cdf((theta - b) / sd)
        if np.all(np.minimum(self.membership, 1 - self.membership) < 1 - self.settle):
            return []
        ii = np.array([p[0] for p in cand])
        jj = np.array([p[1] for p in cand])
        batch: list[tuple[int, int]] = []
        cov = cov.copy()
        for _ in range(max(1, size)):
            p = expit(theta[ii] - theta[jj])
            info = self.calls_per_pair * p * (1 - p)
            q = cov[ii, ii] + cov[jj, jj] - 2 * cov[ii, jj]
            d = a[:, ii] - a[:, jj]  # (n, pairs): c_m^T Sigma (e_i - e_j)
            drop = info[None, :] * d**2 / (1 + info * q)[None, :]  # variance reduction of each c_m
            z = (theta - b) / np.sqrt(np.maximum(var, 1e-300))
            gain = (norm.pdf(z)[:, None] * drop / np.maximum(var, 1e-300)[:, None]).sum(axis=0)
            taken = {(x, y) for x, y in batch}
            gain[[k for k, pr in enumerate(zip(ii, jj, strict=True)) if pr in taken]] = -np.inf
            best = int(np.argmax(gain))
            if not np.isfinite(gain[best]):
                break
            i, j = int(ii[best]), int(jj[best])
            batch.append((i, j))
            v = cov[:, i] - cov[:, j]  # rank-one (Sherman-Morrison) update for the rest of the batch
            cov = cov - info[best] * np.outer(v, v) / (1 + info[best] * q[best])
            a = c @ cov
            var = np.einsum("ij,ij->i", a, c)
        return batch


def make_policy(name: str, n: int, *, k: int | None, rng: np.random.Generator, calls_per_pair: int = 2,
                settle: float = 0.99, max_repeats: int = 1):
    """The policy called ``name`` for a task of ``n`` transcripts."""
    if name == "all":
        return AllPairs(n, rng=rng)
    if name == "swiss":
        return SwissPairs(n, rng=rng)
    if name == "active":
        if k is None:
            raise ValueError("--pairs active needs --top-k K (the size of the set to identify, e.g. 15 of 18).")
        return ActivePairs(n, k=k, rng=rng, calls_per_pair=calls_per_pair, settle=settle, max_repeats=max_repeats)
    raise ValueError(f"--pairs must be one of {POLICIES}; got {name!r}.")
