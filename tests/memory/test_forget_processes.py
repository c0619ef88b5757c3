"""Gone in every process: another process's recall index never serves a removed entry.

Each web and worker process keeps its own recall index per scope, a cache of the
database checked against the scope's version row (memory/services/recall.py). A probe
process (tests/recall_probe.py) builds its index, the test process deletes or forgets,
and the probe — without restarting — must neither return nor hold the removed entry,
whichever path removed it: a governance cascade, or Django's own cascade when an
operator deletes a run in the admin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.models import Run
from memory.models import MemoryJob, RecallEntry
from tests.cluster import ROOT, Cluster, child_env, manage, queue_purge, wait_until
from tests.factories import Teacher, make_teacher, run_via_api

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STUDENT = "王小明"


class Probe:
    def __init__(self, teacher: Teacher) -> None:
        self.scope = {
            "tenant": teacher.tenant.pk,
            "agent": teacher.agent.pk,
            "owner": teacher.user.pk,
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.recall_probe"],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ask(self, q: str, *terms: str) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({**self.scope, "q": q, "terms": list(terms)}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(
                self.process.stderr.read() if self.process.stderr else "probe died"
            )
        return dict(json.loads(line))

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def school(transactional_db: None) -> Teacher:
    return make_teacher(tenant_name="多进程学校", username="p")


@pytest.fixture
def probe(school: Teacher) -> Iterator[Probe]:
    started = Probe(school)
    yield started
    started.close()


def test_a_deleted_thread_leaves_every_process(school: Teacher, probe: Probe) -> None:
    first = run_via_api(school, f"{STUDENT}的数据结构期中试卷，考二叉树遍历", memory_job=True)
    run_via_api(school, "简答题换两道二叉树遍历的题", str(first["thread_id"]), memory_job=True)
    other = run_via_api(school, "另一个会话：二叉树遍历的练习", memory_job=True)
    thread_runs = set(Run.objects.filter(thread_id=first["thread_id"]).values_list("pk", flat=True))
    before = probe.ask("二叉树遍历")
    assert thread_runs <= set(before["index"]) and thread_runs & set(before["hits"])

    assert school.client.delete(f"/api/threads/{first['thread_id']}").status_code == 204

    after = probe.ask("二叉树遍历")
    assert after["index"] == [other["id"]]
    assert set(after["hits"]) == {other["id"]}


def test_a_deleted_run_leaves_every_process(school: Teacher, probe: Probe) -> None:
    first = run_via_api(school, "出一份光合作用的单元测验", memory_job=True)
    second = run_via_api(school, "出一份牛顿第二定律的单元测验", memory_job=True)
    assert set(probe.ask("单元测验")["index"]) == {first["id"], second["id"]}

    assert school.client.delete(f"/api/runs/{first['id']}").status_code == 204

    answer = probe.ask("光合作用 单元测验")
    assert answer["index"] == [second["id"]] and first["id"] not in answer["hits"]


def test_a_run_deleted_in_the_admin_leaves_every_process(school: Teacher, probe: Probe) -> None:
    """Django's own cascade (Run → RecallEntry): no service saw it, the receiver did."""
    first = run_via_api(school, "出一份光合作用的单元测验", memory_job=True)
    second = run_via_api(school, "出一份牛顿第二定律的单元测验", memory_job=True)
    assert set(probe.ask("单元测验")["index"]) == {first["id"], second["id"]}

    Run.objects.filter(pk=first["id"]).delete()  # what the admin's delete does

    assert not RecallEntry.objects.filter(run_id=first["id"]).exists()
    answer = probe.ask("光合作用 单元测验")
    assert answer["index"] == [second["id"]] and first["id"] not in answer["hits"]


def test_a_forgotten_text_leaves_every_process(school: Teacher, probe: Probe) -> None:
    run = run_via_api(school, f"给{STUDENT}单独出一份二次函数练习", memory_job=True)
    before = probe.ask(STUDENT, "小明")
    assert before["df"]["小明"] == 1 and run["id"] in before["hits"]

    response = school.client.post(
        f"/api/agents/{school.agent.pk}/memory/forget", {"text": STUDENT}, format="json"
    )
    assert response.status_code == 202
    assert school.client.get(f"/api/memory/jobs/{response.json()['id']}").json()["status"] == "done"

    after = probe.ask("二次函数练习", "小明")
    assert after["df"]["小明"] == 0  # the old terms are out of the index
    assert after["index"] == [run["id"]] and run["id"] in after["hits"]  # rebuilt, redacted


@pytest.mark.cluster
def test_a_governance_job_runs_in_a_real_worker(
    school: Teacher, probe: Probe, tmp_path: Path
) -> None:
    first = run_via_api(school, "出一份二叉树遍历的试卷", memory_job=True)
    other = run_via_api(school, "另一个会话：二叉树遍历的练习", memory_job=True)
    assert first["id"] in probe.ask("二叉树遍历")["index"]
    # The request from a server process (not the test's sync mode): the job goes through
    # the broker to the cluster, as in production.
    manage(
        "shell",
        "-c",
        "from memory.models import Thread; from memory.services.forget import thread_delete; "
        f"thread_delete(thread=Thread.objects.get(pk={str(first['thread_id'])!r}), "
        f"actor_id={school.user.pk})",
    )
    job = MemoryJob.objects.get()
    assert job.status == MemoryJob.Status.QUEUED
    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        wait_until(
            lambda: MemoryJob.objects.get(pk=job.pk).status == MemoryJob.Status.DONE,
            timeout=60,
            what="the governance job",
        )
    finally:
        cluster.stop()
        queue_purge()
    assert MemoryJob.objects.get(pk=job.pk).counts["threads"] == 1
    assert probe.ask("二叉树遍历")["index"] == [other["id"]]
