"""Forgetting a text reaches what the model asked its tools (review of stop 21: a run's
``tool_calls`` and the calls in what it was given kept the text after a forget).

A real tool round trip against the loopback fake model: the model's arguments name the
student, once as the model wrote them with ``\\u`` escapes, once as text that is not JSON.
After the forget job, neither the run's calls, nor the messages it was given, nor its
manifest hold the name; what is not text (names, ids, chunk ids, tokens) stays.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.models import Run
from memory.models import RunContext
from memory.scope import Scope
from memory.services.forget import memory_forget, memory_job_process, run_delete
from tests.factories import Teacher
from tests.fakellm import FakeLLMServer, FakeToolCall, ToolCallsReply
from tests.runs.test_tool_loop import cloud, run  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

STUDENT = "王小明"


def _stored(run_id: int) -> str:
    """Everything stored about the run's tool use, as JSON text with escapes decoded."""
    context = RunContext.objects.get(run_id=run_id)
    held = [Run.objects.get(pk=run_id).tool_calls, context.messages, context.manifest]
    text = json.dumps(held, ensure_ascii=False)
    # Arguments are JSON inside JSON: decode them too, as a reader of the API would.
    for message in context.messages:
        for call in message.get("tool_calls", []) if isinstance(message, dict) else []:
            text += str(json.loads(call["arguments"])) if call["arguments"].startswith("{") else ""
    return text


def _tool_run(cloud: Teacher, fake_llm: FakeLLMServer) -> dict[str, Any]:  # noqa: F811
    escaped = json.dumps({"query": f"{STUDENT}的期末成绩"})  # ensure_ascii: \\u escapes
    assert STUDENT not in escaped
    fake_llm.set_mode(
        "ok",
        script=[
            ToolCallsReply([FakeToolCall("kb_search", escaped, id="c1")]),
            ToolCallsReply([FakeToolCall("kb_search", f"{STUDENT} 不是 JSON", id="c2")]),
            "没有找到相关材料。",
        ],
    )
    body = run(cloud, "查一下期末的情况", stream=False)
    assert body["status"] == "completed"
    assert STUDENT in _stored(body["id"])
    return body


def test_forgetting_a_text_redacts_the_tool_calls_a_run_made(
    cloud: Teacher,  # noqa: F811 (the fixture imported above)
    fake_llm: FakeLLMServer,
) -> None:
    body = _tool_run(cloud, fake_llm)
    before = Run.objects.get(pk=body["id"]).tool_calls

    job = memory_forget(
        scope=Scope.for_agent(cloud.agent, owner_id=cloud.user.pk),
        text=STUDENT,
        actor_id=cloud.user.pk,
    )
    outcome = memory_job_process(job_id=job.pk)

    assert outcome.counts["runs"] == 1 and outcome.counts["run_contexts"] == 1
    stored = _stored(body["id"])
    assert STUDENT not in stored and "（已遗忘）" in stored
    after = Run.objects.get(pk=body["id"])
    assert after.redacted_at is not None
    assert [c["arguments"] for c in after.tool_calls] == [{"query": "（已遗忘）的期末成绩"}, None]
    assert after.tool_calls[1]["arguments_raw"] == "（已遗忘） 不是 JSON"
    for old, new in zip(before, after.tool_calls, strict=True):  # what is not text stays
        assert {k: v for k, v in old.items() if not k.startswith("arguments")} == {
            k: v for k, v in new.items() if not k.startswith("arguments")
        }
    context = RunContext.objects.get(run_id=body["id"])
    calls = [c for m in context.messages for c in m.get("tool_calls", [])]
    assert [json.loads(c["arguments"]) for c in calls[:1]] == [{"query": "（已遗忘）的期末成绩"}]
    # Idempotent: a second pass finds nothing left.
    again = memory_job_process(
        job_id=memory_forget(
            scope=Scope.for_agent(cloud.agent, owner_id=cloud.user.pk),
            text=STUDENT,
            actor_id=cloud.user.pk,
        ).pk
    )
    assert again.counts["runs"] == 0 and again.counts["run_contexts"] == 0


def test_deleting_a_run_erases_its_tool_calls_and_keeps_its_cost(
    cloud: Teacher,  # noqa: F811
    fake_llm: FakeLLMServer,
) -> None:
    body = _tool_run(cloud, fake_llm)
    tokens = Run.objects.get(pk=body["id"]).input_tokens

    job = run_delete(run=Run.objects.get(pk=body["id"]), actor_id=cloud.user.pk)
    memory_job_process(job_id=job.pk)

    erased = Run.objects.get(pk=body["id"])
    assert erased.tool_calls == [] and erased.input == "" and erased.input_tokens == tokens
    assert STUDENT not in json.dumps(
        list(Run.objects.filter(pk=body["id"]).values()), ensure_ascii=False, default=str
    )
