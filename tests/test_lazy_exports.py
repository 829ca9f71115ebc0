"""Package exports load on first use (evalkit._lazy); every exported name must still resolve to
the object its module defines, whatever was imported before (a submodule of the same name)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PACKAGES = ("evalkit.ratings", "evalkit.io", "evalkit.engine", "evalkit.stats")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_is_its_modules_object_after_all_submodules_are_imported(package):
    code = f"""
import importlib, pkgutil, types
pkg = importlib.import_module({package!r})
for m in pkgutil.iter_modules(pkg.__path__):   # import every submodule first (sets package attributes)
    importlib.import_module(f"{package}.{{m.name}}")
bad = []
for name, mod in pkg._EXPORTS.items():
    got = getattr(pkg, name)
    want = getattr(importlib.import_module(f"{package}.{{mod}}"), name)
    if got is not want or isinstance(got, types.ModuleType):
        bad.append(name)
exec(f"from {package} import *")
print("BAD=" + ",".join(bad))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("BAD="), proc.stdout


@pytest.mark.parametrize("package", PACKAGES)
def test_all_names_are_exported(package):
    pkg = importlib.import_module(package)
    assert set(pkg.__all__) <= set(pkg._EXPORTS) | set(vars(pkg))
    assert set(pkg.__all__) <= set(dir(pkg))
    subs = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    assert all(mod in subs for mod in pkg._EXPORTS.values())
