"""Shared pieces of the hostile-input tests: the API's operations, a world to aim at, the
database as it was, and a count of every request sent (written to artifacts/hostile/).

The operations come from the OpenAPI schema, so an endpoint added later is attacked by
the same tables without anyone listing it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from agents.models import RateBucket, Run
from memory.services.kb_documents import kb_document_create
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, run_via_api

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # /api/runs/{run_id}/
    request_schema: dict[str, Any] | None
    takes_forms: bool = False  # multipart or urlencoded bodies too (an upload)

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def path_params(self) -> list[str]:
        return re.findall(r"\{(\w+)\}", self.path)


def _inlined(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The schema with its properties' enum references (``$ref``, ``allOf``) resolved."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        refs = [prop, *prop.get("allOf", []), *prop.get("oneOf", [])]
        for part in refs:
            if "$ref" in part:
                prop = {
                    **components[part["$ref"].rsplit("/", 1)[-1]],
                    **{k: v for k, v in prop.items() if k not in {"$ref", "allOf", "oneOf"}},
                }
                break
        properties[name] = prop
    return {**schema, "properties": properties}


def api_operations() -> list[Operation]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    found = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            body = content.get("application/json")
            takes_forms = "multipart/form-data" in content
            request_schema = None
            if body is not None:
                ref = body["schema"]["$ref"].rsplit("/", 1)[-1]
                request_schema = _inlined(components[ref], components)
            found.append(
                Operation(
                    method=method,
                    path=path,
                    request_schema=request_schema,
                    takes_forms=takes_forms,
                )
            )
    return sorted(found, key=lambda op: (op.path, op.method))


def sample_body(operation: Operation) -> dict[str, Any]:
    """A body with every field the schema names, of the right type (not always valid)."""
    schema = operation.request_schema or {}
    body: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        body[name] = (
            prop["enum"][0]
            if prop.get("enum")
            else {"string": "测试内容", "integer": 1, "object": {}, "boolean": True}.get(
                kind or "", "测试内容"
            )
        )
    if "thread_id" in body:
        body.pop("thread_id")
    return body


@dataclass
class World:
    """One teacher's objects of every kind, plus another school's teacher."""

    teacher: Teacher
    outsider: Teacher
    ids: dict[str, str]

    def url(self, operation: Operation, **overrides: str) -> str:
        values = {**self.ids, **overrides}
        return operation.path.format(**{name: values[name] for name in operation.path_params})


def build_world(teacher: Teacher, outsider: Teacher) -> World:
    candidates = candidates_via_job(
        teacher, "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"
    )
    assert len(candidates) >= 2, "the offline model proposes one candidate per sentence"
    fact = fact_via_confirm(teacher, candidates[0])
    run = Run.objects.filter(owner_id=teacher.user.pk).latest("pk")
    run_via_api(teacher, "简答题换两道", thread_id=run.thread_id)
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="校规",
        text="# 校规\n\n迟到三次记警告一次。",
        visibility="agent",
    )
    job = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget/", {"text": "人教版"}, format="json"
    )
    assert job.status_code == 202, job.content
    return World(
        teacher=teacher,
        outsider=outsider,
        ids={
            "agent_id": str(teacher.agent.pk),
            "run_id": str(run.pk),
            "thread_id": str(run.thread_id),
            "candidate_id": str(candidates[1].pk),
            "fact_id": str(fact.pk),
            "document_id": str(document.pk),
            "job_id": str(job.json()["id"]),
        },
    )


def database_state() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every model: a request that changes nothing leaves this equal.

    But the run limits' buckets: every request to start a run counts, a refused one too
    (agents/api/throttles.py)."""
    state = {}
    for model in apps.get_models():
        if model is RateBucket:
            continue
        rows = model.objects.order_by("pk").values_list()
        state[model._meta.label] = [tuple(map(repr, row)) for row in rows]
    return state


def as_json(response: Any) -> Any:
    content_type = response.get("Content-Type", "")
    assert content_type.startswith("application/json"), (content_type, response.content[:200])
    return json.loads(response.content)


@dataclass
class Tally:
    """Requests sent by one test module, by status; written out at the module's end."""

    name: str
    statuses: Counter[int] = field(default_factory=Counter)

    def send(self, client: APIClient, method: str, path: str, **kwargs: Any) -> Any:
        """``method`` as the client's helper (``post``), or in capitals for a raw request
        (a body on a GET or DELETE)."""
        if method.isupper():
            response = client.generic(method, path, **kwargs)
        else:
            response = getattr(client, method)(path, **kwargs)
        self.statuses[response.status_code] += 1
        return response

    def write(self) -> dict[str, Any]:
        summary = {
            "module": self.name,
            "requests": sum(self.statuses.values()),
            "server_errors": sum(n for code, n in self.statuses.items() if code >= 500),
            "by_status": {str(code): n for code, n in sorted(self.statuses.items())},
        }
        folder = ROOT / "artifacts" / "hostile"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.name}.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary


def changed_models(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return sorted(label for label in before if before[label] != after.get(label))


def tally_fixture(name: str) -> Callable[[], Iterator[Tally]]:
    """A module-scoped ``tally`` fixture whose counts are written when the module ends."""

    @pytest.fixture(scope="module", name="tally")
    def tally() -> Iterator[Tally]:
        counts = Tally(name)
        yield counts
        counts.write()

    return tally


@pytest.fixture
def no_run_limits(settings: Any) -> None:
    """Hundreds of run requests per test; the limits are tests/test_throttling.py's."""
    settings.RUN_RATE_USER = settings.RUN_RATE_TENANT = "100000/minute"
