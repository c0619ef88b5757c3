"""RunOutput.represent (one shared serializer per class) answers what a serializer per
run answers, whatever the run: finished, failed, with tool calls, in either language."""

from __future__ import annotations

import pytest
from django.utils import translation

from agents.models import Run
from runs.api.serializers import RunOutput
from tests.factories import Teacher, make_provider, run_via_api

pytestmark = pytest.mark.django_db


def test_represent_equals_a_serializer_per_run(teacher: Teacher) -> None:
    run_via_api(teacher, "出一份数据结构试卷")
    run_via_api(teacher, "在知识库里查一下期末考试安排")  # the offline model calls kb_search
    teacher.agent.provider = make_provider(name="关着的端口", base_url="http://127.0.0.1:9/v1")
    teacher.agent.save()
    failed = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run", {"input": "再出一份"}, format="json"
    )
    assert failed.status_code >= 400 or failed.json()["status"] == Run.Status.FAILED
    runs = list(Run.objects.order_by("pk"))
    assert any(run.tool_calls for run in runs)
    assert {run.status for run in runs} >= {Run.Status.COMPLETED, Run.Status.FAILED}
    for language in ("zh-hans", "en"):
        with translation.override(language):
            for run in runs:
                assert RunOutput.represent(run) == dict(RunOutput(run).data)
