"""Continue-run (design v2 §2.2): the source is read once, before the new run exists."""

from __future__ import annotations

import pytest

from agents.models import Agent, Run
from runs.services import RunRejected, run_execute, run_start, run_stream
from tests.factories import Teacher, run_via_api

pytestmark = pytest.mark.django_db


def continue_from(teacher: Teacher, source_id: object, *, stream: bool = False) -> object:
    url = f"/api/agents/{teacher.agent.pk}/run" + ("/stream" if stream else "")
    return teacher.client.post(
        url, {"input": "在这份上把选择题改成5道", "context": {"run_id": source_id}}, format="json"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_vanished_source_is_a_400_and_no_run_is_left(teacher: Teacher, stream: bool) -> None:
    source = run_via_api(teacher, "出一份数据结构试卷")
    Run.objects.filter(pk=source["id"]).delete()
    before = Run.objects.count()
    response = continue_from(teacher, source["id"], stream=stream)
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert "context.run_id" in response.json()  # type: ignore[attr-defined]
    assert Run.objects.count() == before
    assert not Run.objects.filter(status=Run.Status.RUNNING).exists()


@pytest.mark.parametrize("whose", ["failed", "colleague", "other_agent"])
def test_only_ones_own_completed_run_of_this_agent_can_be_continued(
    teacher: Teacher, colleague: Teacher, whose: str
) -> None:
    if whose == "colleague":
        source_id = run_via_api(colleague, "同事的试卷")["id"]
    else:
        source_id = run_via_api(teacher, "出一份数据结构试卷")["id"]
        if whose == "failed":
            Run.objects.filter(pk=source_id).update(status=Run.Status.FAILED)
        else:
            other = Agent.objects.create(
                tenant=teacher.tenant, name="另一个助手", provider=teacher.agent.provider
            )
            Run.objects.filter(pk=source_id).update(agent=other)
    before = Run.objects.count()
    response = continue_from(teacher, source_id)
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert Run.objects.count() == before


def test_a_source_deleted_after_the_start_is_still_continued(teacher: Teacher) -> None:
    """The start read the source; the run does not look it up again (no RunRejected)."""
    source = run_via_api(teacher, "出一份数据结构试卷")
    started = run_start(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        user_input="在这份上把选择题改成5道",
        context={"run_id": source["id"]},
    )
    Run.objects.filter(pk=source["id"]).delete()
    run = run_execute(started=started)
    assert run.status == Run.Status.COMPLETED
    context = teacher.client.get(f"/api/runs/{run.pk}/context").json()
    assert context["manifest"]["continue_prompt"]["run_id"] == source["id"]
    assert str(source["output"]).splitlines()[0] in context["injected_text"]


def test_the_source_text_is_the_one_read_at_the_start(teacher: Teacher) -> None:
    source = run_via_api(teacher, "出一份数据结构试卷")
    started = run_start(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        user_input="继续",
        context={"run_id": source["id"]},
    )
    Run.objects.filter(pk=source["id"]).update(output="后来改过的内容")
    events = list(run_stream(started=started))
    finished = events[-1].run  # type: ignore[union-attr]
    assert finished.status == Run.Status.COMPLETED
    injected = teacher.client.get(f"/api/runs/{finished.pk}/context").json()["injected_text"]
    assert "后来改过的内容" not in injected
    assert str(source["output"]).splitlines()[0] in injected


def test_start_rejects_before_storing_anything(teacher: Teacher) -> None:
    with pytest.raises(RunRejected) as rejected:
        run_start(
            agent=teacher.agent,
            owner_id=teacher.user.pk,
            user_input="继续",
            context={"run_id": 987654},
        )
    assert rejected.value.field == "context.run_id"
    assert not Run.objects.exists()
    assert not teacher.agent.threads.exists()
