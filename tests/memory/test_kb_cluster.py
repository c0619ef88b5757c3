"""Knowledge-base processing through a real django-q2 cluster, and "every process answers
the same": uploads and deletes made by other processes (server settings, real broker)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from memory.models import KBDocument
from memory.scope import Scope
from memory.services.kb import kb_search
from tests.cluster import Cluster, manage, queue_purge, wait_until
from tests.factories import Teacher, make_teacher
from tests.kbfiles import gbk_text

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _empty_queue() -> Iterator[None]:
    yield
    queue_purge()


@pytest.fixture
def school(transactional_db: None) -> Teacher:
    return make_teacher(tenant_name="集群学校", username="kbq")


def upload_elsewhere(teacher: Teacher, title: str, data: bytes) -> int:
    """An upload made by another process with the server's settings (its job goes
    through the real broker)."""
    out = manage(
        "shell",
        "-c",
        "from agents.models import Agent\n"
        "from memory.services.kb_documents import kb_document_create\n"
        f"d = kb_document_create(agent=Agent.objects.get(pk={teacher.agent.pk}), "
        f"owner_id={teacher.user.pk}, title={title!r}, filename={title + '.txt'!r}, "
        f"data=bytes.fromhex({data.hex()!r}))\n"
        "print(d.pk)",
    )
    return int(out.strip().splitlines()[-1])


def status(document_id: int) -> str:
    return str(KBDocument.objects.get(pk=document_id).status)


def test_uploads_are_processed_by_a_real_cluster_and_a_lost_job_by_the_sweeper(
    school: Teacher, tmp_path: Path
) -> None:
    scope = Scope.for_agent(school.agent, owner_id=school.user.pk)
    lost = upload_elsewhere(school, "校规", gbk_text())
    queue_purge()  # the broker lost it (a flushed Redis, a crash between commit and push)
    KBDocument.objects.filter(pk=lost).update(enqueued_at=timezone.now() - timedelta(hours=1))
    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        fresh = upload_elsewhere(school, "作息", "# 作息\n\n午休时间为十二点至十三点半。".encode())
        wait_until(lambda: status(fresh) == "ready", timeout=90, what="the cluster's processing")
        assert status(lost) == "processing"
        report = manage("memory_sweep", MEMORY_JOB_STALE_AFTER_SECONDS="5")
        assert '"kb_documents_reenqueued": 1' in report, report
        wait_until(lambda: status(lost) == "ready", timeout=90, what="the re-enqueued job")
    finally:
        cluster.stop()
    assert kb_search(scope=scope, query="午休是几点")[0].document_id == fresh
    assert kb_search(scope=scope, query="迟到几次记警告")[0].document_id == lost


def test_a_document_deleted_by_another_process_is_never_found_here_again(
    school: Teacher, tmp_path: Path
) -> None:
    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        document_id = upload_elsewhere(school, "校规", gbk_text())
        wait_until(lambda: status(document_id) == "ready", timeout=90, what="processing")
    finally:
        cluster.stop()
    scope = Scope.for_agent(school.agent, owner_id=school.user.pk)
    assert kb_search(scope=scope, query="迟到几次记警告")[0].document_id == document_id
    # This process's index now holds the chunks; another process deletes the document.
    manage(
        "shell",
        "-c",
        "from memory.models import KBDocument\n"
        "from memory.services.kb_documents import kb_document_delete\n"
        f"kb_document_delete(document=KBDocument.objects.get(pk={document_id}))",
    )
    assert kb_search(scope=scope, query="迟到几次记警告") == []
    assert kb_search(scope=scope, query="请假交回假条") == []
