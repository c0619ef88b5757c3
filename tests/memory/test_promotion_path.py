"""Design v2 review #10: no background job, LLM output or agent tool can create a fact.

The write path from candidate to fact lives in memory.services.facts. This test walks
the static import graph from every module the background job and the run engine can
execute and proves that none of them reaches that module, nor writes CoreFact rows.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WRITE_PATH = "memory.services.facts"
# Entry points of automatic code: django-q2 tasks, the run engine, providers.
AUTOMATIC_ENTRY_POINTS = [
    "memory.tasks",
    "memory.services.jobs",
    "runs.services",
    "runs.tools",
    "runs.tasks",
    "agents.providers.registry",
]


def module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, AttributeError, ValueError):
        return None  # "from package.module import name": not a module

    if spec is None or spec.origin is None or not spec.origin.startswith(str(ROOT)):
        return None
    return Path(spec.origin)


def project_imports(name: str) -> set[str]:
    path = module_file(name)
    if path is None:
        return set()
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in {"agents", "memory", "runs", "web", "config"}}


def reachable(start: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen or module_file(name) is None:
            continue
        seen.add(name)
        todo.extend(project_imports(name))
    return seen


def test_automatic_code_cannot_reach_the_confirm_path() -> None:
    modules = reachable(AUTOMATIC_ENTRY_POINTS)
    assert "memory.services.candidates" in modules  # the walk does see the job's steps
    assert "memory.services.kb" in modules  # ... and the tools' (kb_search's lazy import)
    assert WRITE_PATH not in modules


@pytest.mark.parametrize("name", sorted(reachable(AUTOMATIC_ENTRY_POINTS)))
def test_no_automatic_module_writes_core_facts(name: str) -> None:
    path = module_file(name)
    assert path is not None
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in {
            "create",
            "bulk_create",
            "get_or_create",
            "update_or_create",
        }:
            target = ast.unparse(node.value)
            assert "CoreFact" not in target, f"{name} writes CoreFact: {ast.unparse(node)}"
    assert "candidate_confirm" not in source
