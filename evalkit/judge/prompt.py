"""The judge's prompt (a template from a file) and the strict verdict parser.

A template is plain text with three placeholders, replaced literally (other braces are left alone, so
a rubric may show JSON): ``{task}`` (the task's statement, or its id), ``{a}`` and ``{b}`` (the first-
and second-shown transcripts). It must ask for a verdict the parser reads.

The parser is strict and never guesses. It collects every verdict token in the answer:

* a line ``VERDICT: A`` / ``VERDICT: B`` / ``VERDICT: TIE`` (case-insensitive; ``**`` and brackets
  around it allowed), and
* MT-bench's ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (C = tie; FastChat's ``pair-v2`` judge prompt).

Exactly one distinct verdict among them is the verdict; none, or two different ones ("not [[A]] but
[[B]]"), is recorded as *unparseable* (kept in the log with the raw answer, never counted as a tie).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["DEFAULT_TEMPLATE", "PARSER_VERSION", "Prompt", "load_prompt", "parse_verdict"]

PARSER_VERSION = "verdict-line+brackets/1"

DEFAULT_TEMPLATE = """You are an expert reviewer comparing two attempts by AI agents at the same task.

[Task]
{task}

[Transcript A]
{a}
[End of transcript A]

[Transcript B]
{b}
[End of transcript B]

Judge which attempt accomplishes the task better: correctness first, then completeness, then efficiency.
Ignore the order in which the transcripts are shown and their length. Explain briefly, then end your answer
with exactly one line, "VERDICT: A", "VERDICT: B" or "VERDICT: TIE".
"""

_LINE = re.compile(r"^[\s>*_#`\[]*verdict[\s*_`\]]*[:=][\s*_`\[\"']*(A|B|TIE)[\s*_`\]\"'.!]*$",
                   re.IGNORECASE | re.MULTILINE)
_BRACKETS = re.compile(r"\[\[\s*(A|B|C)\s*\]\]")
_PLACEHOLDERS = ("{task}", "{a}", "{b}")


class Prompt:
    """A judge prompt: the template text and its SHA-256 (part of the cache key)."""

    def __init__(self, template: str = DEFAULT_TEMPLATE, *, source: str = "built-in") -> None:
        missing = [p for p in ("{a}", "{b}") if p not in template]
        if missing:
            raise ValueError(f"The prompt template {source} lacks the placeholder(s) {', '.join(missing)}: it needs "
                             "{a} and {b} for the two transcripts (and optionally {task}).")
        self.template = template
        self.source = source
        self.sha256 = hashlib.sha256((PARSER_VERSION + "\n" + template).encode("utf-8")).hexdigest()

    def render(self, task: str, first: str, second: str) -> str:
        """The template with ``{task}``, ``{a}`` (first shown) and ``{b}`` (second shown) filled in."""
        values = {"{task}": task, "{a}": first, "{b}": second}
        return re.sub(r"\{task\}|\{a\}|\{b\}", lambda m: values[m.group(0)], self.template)


def load_prompt(path: str | Path | None) -> Prompt:
    """The template in ``path`` (UTF-8 text), or the built-in one for None."""
    if path is None:
        return Prompt()
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--prompt {str(path)!r}: no such file.")
    return Prompt(p.read_text(encoding="utf-8"), source=str(path))


def parse_verdict(answer: str | None) -> str | None:
    """``"A"``, ``"B"``, ``"tie"`` or None (unparseable) from a judge's answer; see the module notes."""
    if not answer:
        return None
    found = {m.group(1).upper() for m in _LINE.finditer(answer)}
    found |= {("TIE" if m.group(1) == "C" else m.group(1)) for m in _BRACKETS.finditer(answer)}
    if len(found) != 1:
        return None
    v = found.pop()
    return "tie" if v == "TIE" else v
