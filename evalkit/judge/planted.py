"""A planted judging problem with a known answer: transcripts of known quality and a judge of known
noise and position bias (the acceptance test of ``evalkit judge``, and a way to try a setup offline).

:func:`planted_transcripts` writes ``n_per_task`` transcripts per task whose true strengths are known
(by default seed 002's case: 18 per task, a clear top 15 above a gap, 3 below). Each transcript carries
its strength in a marker line (``[planted quality 1.234567]``); :class:`PlantedJudge` reads the two
markers from the prompt and answers ``VERDICT: A`` with probability ``(1 - tie) * sigmoid(qa - qb +
position_bias)``, ``VERDICT: TIE`` with probability ``tie``, else ``VERDICT: B``. Its draws are a hash
of the prompt and the seed (the n-th time a prompt is asked, the n-th draw), so answers do not depend on
the order in which concurrent calls arrive. :func:`planted_mockllm` serves the same judge through Inspect
AI's ``mockllm`` provider.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

import numpy as np

from evalkit.judge.transcripts import Transcript, _make

__all__ = ["planted_strengths", "planted_transcripts", "PlantedJudge", "planted_mockllm", "true_top_k"]

_MARK = re.compile(r"\[planted quality (-?\d+\.\d+)\]")


def planted_strengths(n: int = 18, *, k: int = 15, spacing: float = 0.3, gap: float = 1.8) -> np.ndarray:
    """Strengths (log-odds scale), best first: the top ``k`` ``spacing`` apart, a ``gap`` below the
    k-th, the rest ``spacing`` apart again; centred."""
    top = np.arange(k)[::-1] * spacing + gap
    rest = -np.arange(n - k) * spacing
    s = np.r_[top, rest]
    return s - s.mean()


def planted_transcripts(n_tasks: int, *, n_per_task: int = 18, k: int = 15, spacing: float = 0.3, gap: float = 1.8,
                        systems: tuple[str, ...] = ("planted",), rng: int = 0,
                        system_shift: tuple[float, ...] | None = None) -> list[Transcript]:
    """Transcripts of known quality; within a task their file order is shuffled (seeded).

    With several ``systems`` the transcripts of a task are dealt to them in turn, and ``system_shift``
    (one value per system) is added to their strengths, so the systems differ by a known amount.
    """
    gen = np.random.default_rng(rng)
    base = planted_strengths(n_per_task, k=k, spacing=spacing, gap=gap)
    shift = system_shift or tuple(0.0 for _ in systems)
    out = []
    for t in range(n_tasks):
        perm = gen.permutation(n_per_task)
        for pos, idx in enumerate(perm):
            system = systems[pos % len(systems)]
            q = float(base[idx] + shift[pos % len(systems)])
            text = (f"Attempt {pos} at task {t}.\n[planted quality {q:.6f}]\n"
                    f"(transcript body of {system}, run {pos})")
            out.append(_make(system, f"task-{t:03d}", f"run-{pos:02d}", text, f"Planted task {t}", "planted", 0))
    return out


def true_top_k(transcripts: list[Transcript], k: int) -> dict[str, set[str]]:
    """Per task, the ids of the ``k`` transcripts of highest planted quality."""
    by: dict[str, list[tuple[float, str]]] = {}
    for t in transcripts:
        m = _MARK.search(t.text)
        if m is None:
            raise ValueError(f"{t.id} carries no planted quality marker.")
        by.setdefault(t.task, []).append((float(m.group(1)), t.id))
    return {task: {i for _, i in sorted(v, reverse=True)[:k]} for task, v in by.items()}


class PlantedJudge:
    """A judge of known noise (the Bradley–Terry model itself), position bias and tie rate."""

    def __init__(self, *, position_bias: float = 0.5, tie: float = 0.1, rng: int = 0, scale: float = 1.0) -> None:
        self.position_bias, self.tie, self.seed, self.scale = position_bias, tie, int(rng), scale
        self.asked: dict[str, int] = {}
        self.calls = 0
        self._lock = threading.Lock()

    def verdict(self, prompt: str) -> str:
        marks = _MARK.findall(prompt)
        if len(marks) != 2:
            return "I cannot tell which transcript is which."
        qa, qb = (float(x) for x in marks)
        digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        with self._lock:
            nth = self.asked.get(digest, 0)
            self.asked[digest] = nth + 1
            self.calls += 1
        h = hashlib.sha256(f"{self.seed}:{nth}:{digest}".encode()).digest()
        u1 = int.from_bytes(h[:8], "big") / 2**64
        u2 = int.from_bytes(h[8:16], "big") / 2**64
        if u1 < self.tie:
            return "Both are equally good.\nVERDICT: TIE"
        p_a = 1.0 / (1.0 + np.exp(-(self.scale * (qa - qb) + self.position_bias)))
        return "Transcript A is better.\nVERDICT: A" if u2 < p_a else "Transcript B is better.\nVERDICT: B"

    def __call__(self, prompt: str) -> str:
        return self.verdict(prompt)


def planted_mockllm(judge: PlantedJudge) -> Any:
    """An Inspect ``mockllm/model`` whose answers are ``judge``'s (usage set, so nothing is downloaded)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = "\n".join(str(getattr(m, "text", m.content)) for m in messages)
        text = judge.verdict(prompt)
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=len(prompt) // 4, output_tokens=len(text) // 4,
                               total_tokens=(len(prompt) + len(text)) // 4)
        return out

    return get_model("mockllm/model", custom_outputs=answer)
