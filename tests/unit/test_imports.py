"""Every import of the project's own modules resolves, including those inside functions (mypy's
ignore_missing_imports would let a moved module's old name pass silently)."""

from __future__ import annotations

import ast
import importlib

from tests.helpers import ROOT


def test_every_import_of_our_modules_resolves() -> None:
    broken = []
    for folder in ("agentcli", "tools", "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                if not node.module.startswith(("agentcli", "tests")):
                    continue
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if hasattr(module, alias.name):
                        continue
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        broken.append(f"{path.relative_to(ROOT)}: {node.module}.{alias.name}")
    assert broken == []
