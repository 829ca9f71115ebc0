"""Who judges: a model through Inspect AI's ``get_model`` (any provider Inspect supports, the
``evalkit[judge]`` extra), or a Python callable.

``--judge`` takes

* an Inspect model name, ``provider/model`` (``openai/gpt-4o``, ``anthropic/claude-sonnet-4-0``,
  ``mockllm/model`` ...), resolved by :func:`inspect_ai.model.get_model` with Inspect's own
  configuration (API keys from the environment, ``--judge-arg KEY=VALUE`` as model arguments);
* ``python:MODULE:FUNCTION`` or ``python:path/to/file.py:FUNCTION``: a function ``f(prompt: str) -> str``
  (or ``async def``), called with the rendered prompt; its answer goes through the same parser.

In the library, :func:`resolve_judge` also takes an Inspect ``Model`` object (e.g. ``get_model(
"mockllm/model", custom_outputs=...)``) or any callable.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["JudgeModel", "resolve_judge"]


@dataclass
class JudgeModel:
    """A judge: a name (recorded in the log and the cache key) and an async ``ask(prompt) -> answer``."""

    name: str
    ask: Callable[[str], Awaitable[str]]
    kind: str  # "inspect" or "python"


def _from_callable(fn: Callable[..., Any], name: str) -> JudgeModel:
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):  # noqa: B004 (the __call__ method of a callable object, not callability)
        async def ask(prompt: str) -> str:
            return str(await fn(prompt))
    else:
        async def ask(prompt: str) -> str:
            return str(await asyncio.to_thread(fn, prompt))
    return JudgeModel(name=name, ask=ask, kind="python")


def _from_inspect(model: Any) -> JudgeModel:
    async def ask(prompt: str) -> str:
        out = await model.generate(prompt)
        err = getattr(out, "error", None)
        if err:
            raise RuntimeError(f"the model returned an error: {err}")
        return str(out.completion)

    return JudgeModel(name=str(getattr(model, "name", model)), ask=ask, kind="inspect")


def _load_python(spec: str) -> tuple[Callable[..., Any], str]:
    body = spec[len("python:"):]
    target, sep, func = body.rpartition(":")
    if not sep or not target or not func:
        raise ValueError(f"--judge {spec!r}: a Python judge is python:MODULE:FUNCTION or python:FILE.py:FUNCTION.")
    if target.endswith(".py") or "/" in target or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise ValueError(f"--judge {spec!r}: no such file {target!r}.")
        mod_name = f"evalkit_judge_{abs(hash(str(path.resolve())))}"
        loaded = importlib.util.spec_from_file_location(mod_name, path)
        if loaded is None or loaded.loader is None:
            raise ValueError(f"--judge {spec!r}: cannot load {target!r} as Python.")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[mod_name] = module
        loaded.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ValueError(f"--judge {spec!r}: cannot import {target!r} ({exc}).") from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise ValueError(f"--judge {spec!r}: {target!r} has no function {func!r}.")
    return fn, f"python:{Path(target).name if target.endswith('.py') else target}:{func}"


def resolve_judge(judge: str | Callable[..., Any] | Any, *, model_args: Mapping[str, Any] | None = None,
                  name: str | None = None) -> JudgeModel:
    """Turn a ``--judge`` value, an Inspect ``Model`` or a callable into a :class:`JudgeModel`.

    Raises
    ------
    ValueError
        For a malformed spec, a Python target that does not load, or an Inspect model name when
        ``inspect_ai`` is not installed (``pip install 'evalkit[judge]'``).
    """
    if isinstance(judge, JudgeModel):
        return judge
    if isinstance(judge, str):
        if judge.startswith("python:"):
            fn, default = _load_python(judge)
            return _from_callable(fn, name or default)
        if "/" not in judge:
            raise ValueError(f"--judge {judge!r}: give an Inspect model as provider/model (e.g. openai/gpt-4o, "
                             "mockllm/model) or a Python function as python:MODULE:FUNCTION.")
        try:
            from inspect_ai.model import get_model
        except ImportError:
            raise ValueError(f"--judge {judge!r} needs Inspect AI for model access: pip install 'evalkit[judge]' "
                             "(or give a Python function with --judge python:MODULE:FUNCTION).") from None
        model = get_model(judge, **dict(model_args or {}))
        out = _from_inspect(model)
        out.name = name or judge
        return out
    if hasattr(judge, "generate") and hasattr(judge, "api"):  # an inspect_ai Model
        out = _from_inspect(judge)
        out.name = name or out.name
        return out
    if callable(judge):
        return _from_callable(judge, name or f"python:{getattr(judge, '__module__', '?')}:"
                                             f"{getattr(judge, '__qualname__', type(judge).__name__)}")
    raise ValueError(f"Cannot use {judge!r} as a judge: give an Inspect model name, a Model, or a callable.")
