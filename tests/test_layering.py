"""The import graph of evalkit/, read with ``ast``: data flows one way (issue 21).

readers (``io``) -> engine -> counts / session tables -> fits (``ratings``, ``budget``) ->
tests (``stats``) -> ``report`` / ``plots`` -> ``cli``. Every import counts, also one inside a
function (it runs when the function does); only ``if TYPE_CHECKING:`` blocks are left out.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "evalkit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST):
    """Every node, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _imports(path: Path) -> set[str]:
    """The evalkit modules ``path`` imports at run time (absolute names)."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)  # `from evalkit import sim`
    return {m for m in out if m == "evalkit" or m.startswith("evalkit.")}


def _graph() -> dict[str, set[str]]:
    files = [p for p in PKG.rglob("*.py") if "_data" not in p.relative_to(PKG).parts]
    modules = {_module_name(p) for p in files}
    graph = {}
    for p in files:
        # keep only names that are modules (``from evalkit.x import name`` adds evalkit.x.name)
        graph[_module_name(p)] = {m for m in _imports(p) if m in modules}
    return graph


GRAPH = _graph()


def _area(module: str) -> str:
    """``evalkit.io.read`` -> ``io``; a top-level module is its own area (``summary``, ``_escape``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _edges(src_area: str, dst_area: str) -> list[tuple[str, str]]:
    return sorted((m, t) for m, ts in GRAPH.items() for t in ts if _area(m) == src_area and _area(t) == dst_area)


def test_the_graph_was_read():
    assert len(GRAPH) > 100
    assert "evalkit.ratings.bt" in GRAPH["evalkit.ratings.leaderboard"]  # a known edge
    assert "evalkit.studies.fig11_claims" in GRAPH["evalkit.studies.reproduce"]


@pytest.mark.parametrize(("src", "dst"), [
    ("io", "ratings"), ("io", "engine"), ("io", "stats"), ("io", "budget"), ("io", "report"), ("io", "plots"),
    ("sim", "studies"), ("sim", "plots"), ("sim", "report"), ("sim", "budget"), ("sim", "ratings"), ("sim", "stats"),
    ("ratings", "stats"), ("ratings", "report"), ("ratings", "plots"), ("budget", "stats"), ("budget", "report"),
    ("stats", "report"), ("stats", "plots"), ("plots", "report"),
])
def test_no_upward_import(src, dst):
    assert _edges(src, dst) == []


def test_nothing_imports_the_cli():
    assert [(m, t) for m, ts in GRAPH.items() for t in ts
            if _area(t) == "cli" and _area(m) not in ("cli", "__main__", "_entry")] == []  # _entry: the console script


def test_no_cycle_between_areas():
    areas: dict[str, set[str]] = defaultdict(set)
    for m, ts in GRAPH.items():
        areas[_area(m) or m].update(_area(t) or t for t in ts if (_area(t) or t) != (_area(m) or m))
    areas.pop("evalkit", None)  # the package itself: lazy exports only (next test)
    for a in areas:
        areas[a].discard("evalkit")
    cycles = []
    seen: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycles.append(path[path.index(node):] + [node])
            return
        if node in seen:
            return
        for nxt in sorted(areas.get(node, ())):
            visit(nxt, [*path, node])
        seen.add(node)

    for a in sorted(areas):
        visit(a, [])
    assert cycles == []


def test_the_package_imports_only_light_leaves():
    """``import evalkit`` runs evalkit/__init__.py: its exports load lazily (PEP 562)."""
    assert GRAPH["evalkit"] <= {"evalkit._lazy"}


def test_leaf_modules():
    # parameters and bundled data load from leaves: nothing of evalkit below them
    assert GRAPH["evalkit.resources"] == set()
    assert GRAPH["evalkit.sim.params"] <= {"evalkit.resources", "evalkit.sim.generator", "evalkit.sim.policy"}
    # the simulator's base modules do not reach up to the experiments (the old silent-default path)
    for base in ("dag", "generator", "policy", "engine", "swarms", "metrics", "params"):
        up = {t for t in GRAPH[f"evalkit.sim.{base}"] if t.startswith("evalkit.sim.")} & {
            "evalkit.sim.experiments", "evalkit.sim.claims", "evalkit.sim.reproduce", "evalkit.sim.calibrate",
            "evalkit.sim.sessions"}
        assert up == set(), base
