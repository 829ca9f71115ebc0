"""A deterministic discrete-event queue: events ordered by (time, priority, sequence).

Ties in time are broken first by an integer priority (lower first: completions before
dispatch, so the coordinator sees every step finished at one instant before it assigns free
slots), then by insertion order. No randomness lives here, so the same inputs give the same
event order bit for bit. Deliberately tiny (a heap of tuples): the swarm loop in
:mod:`evalkit.sim.swarms` pushes about two events per step.
"""

from __future__ import annotations

import heapq
from typing import Any

__all__ = ["EventQueue", "COMPLETE", "DISPATCH"]

COMPLETE = 0  # an agent finishes a step
DISPATCH = 1  # the coordinator fills free slots


class EventQueue:
    """Min-heap of ``(time, priority, seq, payload)``.

    Examples
    --------
    >>> q = EventQueue()
    >>> q.push(1.0, DISPATCH, "b"); q.push(1.0, COMPLETE, "a"); q.push(0.5, DISPATCH, "c")
    >>> [q.pop()[3] for _ in range(len(q))]
    ['c', 'a', 'b']
    """

    __slots__ = ("_heap", "_seq", "now")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        self.now = 0.0

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, time: float, priority: int, payload: Any) -> None:
        """Schedule ``payload`` at ``time`` (never before the current time)."""
        if time < self.now:
            raise ValueError(f"Cannot schedule an event at {time} before the current time {self.now}.")
        heapq.heappush(self._heap, (time, priority, self._seq, payload))
        self._seq += 1

    def pop(self) -> tuple[float, int, int, Any]:
        """Remove and return the earliest event; advances :attr:`now`."""
        ev = heapq.heappop(self._heap)
        self.now = ev[0]
        return ev

    def peek_time(self) -> float:
        """Time of the earliest event (``inf`` when empty)."""
        return self._heap[0][0] if self._heap else float("inf")
