"""The direction between the apps: web → runs → memory → agents, never back.

``agents`` is the host (tenants, providers, agents, the Run row); ``memory`` the four
layers, which use agents' models and libraries; ``runs`` the run engine, which uses
both; ``web`` the pages, which may use all. Like tests/memory/test_promotion_path.py,
this reads the source (every import statement, at the top, in a function or under
TYPE_CHECKING) instead of trusting a comment. It also holds the rule "imports at the
top": a function-local import is allowed only where the list below says why.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("agents", "memory", "runs", "web")
# What each app may import from the project, besides itself.
ALLOWED: dict[str, set[str]] = {
    "agents": set(),
    "memory": {"agents"},
    "runs": {"memory", "agents"},
    "web": {"runs", "memory", "agents"},
}
# memory uses agents' models and its libraries (providers, tokens, access checks, API
# helpers, the admin it extends) -- never agents' services or views.
MEMORY_USES_OF_AGENTS = {
    "agents.admin",
    "agents.api.fields",
    "agents.api.inputs",
    "agents.api.pagination",
    "agents.api.parsers",
    "agents.api.paths",
    "agents.models",
    "agents.providers.base",
    "agents.providers.registry",
    "agents.rows",
    "agents.selectors",
    "agents.tokens",
}
# Lazy model references ("app.Model" strings) that point up the layers, and why.
UPWARD_MODEL_REFERENCES = {
    # Run.thread: a run belongs to a thread, and memory's models point at runs. The
    # foreign key is a string so no module import exists; only the schema knows.
    ("agents.models", "memory.Thread"),
}
# Function-local imports that are not hidden cycles, and why.
LOCAL_IMPORTS = {
    # A pure module that works without Django (STYLE 5); settings choose the encoding.
    ("agents.tokens", "django.conf"),
    # ... and forgets the encoding name it read when a test overrides TOKEN_ENCODING.
    ("agents.tokens", "django.core.signals"),
    # AppConfig.ready: the signal receivers import models, not loadable at app import.
    ("memory.apps", "memory"),
}
MODEL_REFERENCE = re.compile(r"^(agents|memory|runs|web)\.[A-Z][A-Za-z]+$")


def modules() -> list[str]:
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).with_suffix("")
            if "migrations" in relative.parts:
                continue
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            found.append(".".join(parts))
    return found


def tree_of(module: str) -> ast.Module:
    path = ROOT / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def project_imports(module: str) -> set[str]:
    return {name for name in imports_of(tree_of(module)) if name.split(".")[0] in APPS}


ALL = modules()


def test_the_walk_sees_every_app_and_the_edges_between_them() -> None:
    assert {m.split(".")[0] for m in ALL} == set(APPS)
    assert "memory.services.context" in project_imports("runs.services")
    assert "agents.models" in project_imports("memory.services.jobs")
    assert "memory.selectors" in project_imports("web.panel")


@pytest.mark.parametrize("module", ALL)
def test_imports_go_down_the_layers_only(module: str) -> None:
    app = module.split(".")[0]
    upward = {
        name for name in project_imports(module) if name.split(".")[0] not in {app, *ALLOWED[app]}
    }
    assert upward == set(), f"{module} imports {sorted(upward)} against {app}'s direction"


@pytest.mark.parametrize("module", [m for m in ALL if m.startswith("memory")])
def test_memory_uses_agents_models_and_libraries_only(module: str) -> None:
    used = {name for name in project_imports(module) if name.startswith("agents")}
    assert used <= MEMORY_USES_OF_AGENTS, f"{module} uses {sorted(used - MEMORY_USES_OF_AGENTS)}"


@pytest.mark.parametrize("module", ALL)
def test_lazy_model_references_go_down_the_layers(module: str) -> None:
    app = module.split(".")[0]
    for node in ast.walk(tree_of(module)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = MODEL_REFERENCE.match(node.value)
            if not match or match.group(1) in {app, *ALLOWED[app]}:
                continue
            assert (module, node.value) in UPWARD_MODEL_REFERENCES, (
                f"{module} refers to {node.value} against {app}'s direction"
            )


@pytest.mark.parametrize("module", ALL)
def test_imports_are_at_the_top(module: str) -> None:
    for node in ast.walk(tree_of(module)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for name in imports_of(node):
                assert (module, name) in LOCAL_IMPORTS, (
                    f"{module}.{node.name} imports {name} inside the function; move it to "
                    "the top, or list the reason in LOCAL_IMPORTS"
                )
