"""Design v2 review #10: no background job, LLM output or agent tool can create a fact.

Facts are created in exactly two places, both a person's action: the confirm path
(memory.services.facts: a teacher or a tenant administrator confirms a candidate) and
the legacy import (memory.services.legacy_import: an operator imports the old
platform's hand-written facts, from the command line or the admin). This test walks the
static import graph from every module the background job and the run engine can
execute — the after-run job, the governance jobs (delete, forget), the sweeper — and
proves that none of them reaches either, nor writes CoreFact rows; and it checks that no
other module of the project creates CoreFact rows at all.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WRITE_PATH = "memory.services.facts"
# The only modules that may create facts, and why (each is a person's action).
FACT_CREATORS = {
    WRITE_PATH: "a person confirms a candidate",
    "memory.services.legacy_import": "an operator imports hand-written legacy facts",
}
# Entry points of automatic code: django-q2 tasks (after-run job, governance jobs,
# compression, the sweeper's schedule), the run engine, providers.
AUTOMATIC_ENTRY_POINTS = [
    "memory.tasks",
    "memory.services.jobs",
    "memory.services.forget",
    "memory.services.sweeper",
    "runs.services",
    "runs.tools",
    "runs.tasks",
    "runs.sweeper",
    "agents.providers.registry",
]
# The callers of the legacy import: the command and the admin, nothing automatic.
IMPORT_CALLERS = {"memory.management.commands.import_legacy", "memory.admin"}


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
    assert "memory.services.kb" in modules  # ... and the tools' (kb_search)
    assert "memory.services.forget" in modules  # and the governance jobs
    assert set(FACT_CREATORS).isdisjoint(modules)


def creates_core_facts(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr
            in {
                "create",
                "bulk_create",
                "get_or_create",
                "update_or_create",
            }
            and "CoreFact" in ast.unparse(node.value)
        ):
            found.append(ast.unparse(node))
    return found


def project_modules() -> list[str]:
    names = []
    for app in ("agents", "memory", "runs", "web", "ops", "config"):
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).with_suffix("")
            if "migrations" not in relative.parts:
                names.append(".".join(relative.parts))
    return names


def test_only_the_person_paths_create_facts() -> None:
    creators = {
        name
        for name in project_modules()
        if creates_core_facts((ROOT / Path(*name.split("."))).with_suffix(".py").read_text())
    }
    assert creators == set(FACT_CREATORS)


def test_the_legacy_import_is_called_by_the_command_and_the_admin_only() -> None:
    callers = {
        name
        for name in project_modules()
        if "memory.services.legacy_import" in project_imports(name)
    }
    assert callers == IMPORT_CALLERS
    for name in IMPORT_CALLERS:
        assert name not in reachable(AUTOMATIC_ENTRY_POINTS)


@pytest.mark.parametrize("name", sorted(reachable(AUTOMATIC_ENTRY_POINTS)))
def test_no_automatic_module_writes_core_facts(name: str) -> None:
    path = module_file(name)
    assert path is not None
    source = path.read_text()
    assert creates_core_facts(source) == [], f"{name} writes CoreFact"
    assert "candidate_confirm" not in source
    assert "legacy_import(" not in source
