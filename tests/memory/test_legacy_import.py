"""Legacy import (issue #14): core_memory.json and recall_log.jsonl, every accepted shape,
unreadable lines, red-line refusals, idempotence, dry runs, no half import; the command
and the admin's upload."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from agents.models import Membership, Run
from memory import legacy
from memory.models import CoreFact, MemoryAuditEvent, RecallEntry, RedlineAudit, Thread
from memory.scope import Scope
from memory.services.legacy_import import IMPORT_THREAD_TITLE, ImportRejected, legacy_import
from memory.services.recall import RecallQuery, recall_cache_clear, recall_search
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, make_teacher

SHANGHAI = ZoneInfo("Asia/Shanghai")
ID_NUMBER = "11010519491231002X"


# -- reading the files (pure) --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ('["我教八年级数学", "以后用人教版"]', [(1, "我教八年级数学"), (1, "以后用人教版")]),
        (
            '{"facts": [\n"我教八年级数学",\n{"text": "以后用人教版"}\n]}',
            [(2, "我教八年级数学"), (3, "以后用人教版")],
        ),
        (
            '{"version": 3, "items": [\n {"text": "a a"},\n {"content": "b"},\n {"fact": "c"}\n]}',
            [(2, "a a"), (3, "b"), (4, "c")],
        ),
        (
            '{\n  "年级": "八年级",\n  "教材": ["人教版", "北师大版"],\n  "课时": 4\n}',
            [(2, "年级：八年级"), (3, "教材：人教版、北师大版"), (4, "课时：4")],
        ),
        ('\ufeff[" 多余的   空格 "]', [(1, "多余的 空格")]),
        ("[]", []),
    ],
)
def test_every_core_shape_is_read_with_its_lines(
    document: str, expected: list[tuple[int, str]]
) -> None:
    parsed = legacy.parse_core(legacy.decode(document.encode()))
    assert [(i.line, i.text) for i in parsed.items] == expected
    assert parsed.unreadable == []


def test_unreadable_core_items_are_reported_by_line() -> None:
    parsed = legacy.parse_core('[\n"好",\n3,\n"",\n{"x": 1},\nnull\n]')
    assert [(i.line, i.text) for i in parsed.items] == [(2, "好")]
    assert [(u.line, u.reason) for u in parsed.unreadable] == [
        (3, legacy.NOT_TEXT),
        (4, legacy.EMPTY),
        (5, legacy.NOT_TEXT),
        (6, legacy.NOT_TEXT),
    ]
    pairs = legacy.parse_core('{\n"a": {"nested": 1},\n"b": true,\n"c": "好"\n}')
    assert [(u.line, u.reason) for u in pairs.unreadable] == [(2, "not_text"), (3, "not_text")]


@pytest.mark.parametrize(
    ("data", "line"),
    [(b'["a",', 1), (b'{\n"facts": [\n"a"\n', 4), (b"42", 1), (b'"just a string"', 1), (b"", 1)],
)
def test_a_malformed_core_file_is_refused_whole(data: bytes, line: int) -> None:
    with pytest.raises(legacy.LegacyFileError) as caught:
        legacy.parse_core(legacy.decode(data))
    assert caught.value.line == line


def test_text_encodings() -> None:
    assert legacy.decode("我教数学".encode("gbk")) == "我教数学"
    assert legacy.decode("\ufeff[]".encode()) == "[]"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01 10:00", datetime(2024, 3, 1, 10, 0, tzinfo=SHANGHAI)),
        ("2024-03-01T10:00:00Z", datetime(2024, 3, 1, 18, 0, tzinfo=SHANGHAI)),
        ("2024/3/1 9:05:30", datetime(2024, 3, 1, 9, 5, 30, tzinfo=SHANGHAI)),
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=SHANGHAI)),
        (1709258400, datetime(2024, 3, 1, 10, 0, tzinfo=SHANGHAI)),
        (1709258400000, datetime(2024, 3, 1, 10, 0, tzinfo=SHANGHAI)),
        ("1709258400", datetime(2024, 3, 1, 10, 0, tzinfo=SHANGHAI)),
        ("2024-13-01", None),
        ("昨天", None),
        (True, None),
        (None, None),
        ("", None),
    ],
)
def test_timestamps(value: Any, expected: datetime | None) -> None:
    assert legacy.parse_timestamp(value, tz=SHANGHAI) == expected


RECALL_LOG = "\n".join(
    [
        json.dumps(
            {"ts": "2024-03-01 10:00", "input": "出一份二叉树遍历的试卷", "output": "试卷如下"}
        ),
        json.dumps({"time": 1709348400, "query": "讲讲图的最短路径", "result": "Dijkstra 算法"}),
        json.dumps(
            {"created_at": "2024-03-03", "prompt": "写一封家长通知", "summary": "通知已拟好"}
        ),
        "",
        "not json at all",
        json.dumps(["a", "list"]),
        json.dumps({"input": "没有时间"}),
        json.dumps({"ts": "2024-03-04", "output": "没有输入"}),
        json.dumps({"ts": "2024-03-05", "input": "输出不是文本", "output": {"x": 1}}),
        json.dumps({"ts": "2024-03-06", "input": "只有输入"}),
    ]
)  # fmt: skip


def test_the_recall_log_is_read_line_by_line() -> None:
    parsed = legacy.parse_recall(RECALL_LOG, tz=SHANGHAI, max_chars=1000)
    assert [(i.line, i.input, i.output) for i in parsed.items] == [
        (1, "出一份二叉树遍历的试卷", "试卷如下"),
        (2, "讲讲图的最短路径", "Dijkstra 算法"),
        (3, "写一封家长通知", "通知已拟好"),
        (10, "只有输入", ""),
    ]
    assert [(u.line, u.reason) for u in parsed.unreadable] == [
        (5, legacy.NOT_JSON),
        (6, legacy.NOT_OBJECT),
        (7, legacy.NO_TIMESTAMP),
        (8, legacy.NO_INPUT),
        (9, legacy.OUTPUT_NOT_TEXT),
    ]


# -- the import ----------------------------------------------------------------------------------
CORE = json.dumps(
    {
        "facts": [
            "我教八年级数学",
            "以后出题都用人教版教材",
            f"学生张三的身份证号是{ID_NUMBER}",
            "我教八年级数学。",  # the same fact as line 3
            "",
            "李华数学考了58分",
        ]
    },
    ensure_ascii=False,
    indent=1,
)


def scope_of(teacher: Teacher) -> Scope:
    return Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)


@pytest.mark.django_db
def test_core_facts_are_imported_as_confirmed_through_the_red_line(teacher: Teacher) -> None:
    existing = fact_via_confirm(teacher, candidates_via_job(teacher, "每次作业都要附答案")[0])

    report = legacy_import(
        agent=teacher.agent, owner=teacher.user, core=CORE.encode(), core_name="core_memory.json"
    )

    [core] = report.files
    assert core.error == ""
    assert core.imported == [3, 4]
    assert core.duplicates == [6]
    assert core.refused == [(5, ["id_number"]), (8, ["grade"])]
    assert core.unreadable == [(7, "内容为空")]
    facts = CoreFact.objects.filter(owner=teacher.user).exclude(pk=existing.pk)
    assert sorted(facts.values_list("text", flat=True)) == [
        "以后出题都用人教版教材",
        "我教八年级数学",
    ]
    assert all(f.confirmed_by_id is None and f.valid_until is None for f in facts)
    assert ID_NUMBER not in str(list(CoreFact.objects.values()))
    audit = RedlineAudit.objects.filter(source="fact").values_list("category", "count")
    assert set(audit) == {("id_number", 1), ("grade", 1)}
    # Audit: one event per imported fact and one for the file, never a text.
    events = MemoryAuditEvent.objects.filter(action="import")
    assert sorted(e.object_type for e in events) == ["fact", "fact", "memory"]
    assert events.get(object_type="memory").detail == {
        "file": "core", "imported": 2, "duplicates": 1, "refused": 2, "unreadable": 1,
        "over_capacity": 0,
    }  # fmt: skip
    # The imported facts are injected like any confirmed fact.
    run = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run", {"input": "出一份试卷"}, format="json"
    ).json()
    injected = teacher.client.get(f"/api/runs/{run['id']}/context").json()["injected_text"]
    assert "以后出题都用人教版教材" in injected


@pytest.mark.django_db
def test_import_is_idempotent(teacher: Teacher) -> None:
    first = legacy_import(
        agent=teacher.agent, owner=teacher.user, core=CORE.encode(), recall=RECALL_LOG.encode()
    )
    facts, runs, entries = (
        CoreFact.objects.count(),
        Run.objects.count(),
        RecallEntry.objects.count(),
    )
    again = legacy_import(
        agent=teacher.agent, owner=teacher.user, core=CORE.encode(), recall=RECALL_LOG.encode()
    )
    assert [f.imported for f in first.files] == [[3, 4], [1, 2, 3, 10]]
    assert [f.imported for f in again.files] == [[], []]
    assert again.files[0].duplicates == [3, 4, 6]
    assert again.files[1].duplicates == [1, 2, 3, 10]
    assert (CoreFact.objects.count(), Run.objects.count(), RecallEntry.objects.count()) == (
        facts,
        runs,
        entries,
    )


@pytest.mark.django_db
def test_recall_lines_become_dated_runs_in_an_archived_thread(teacher: Teacher) -> None:
    recall_cache_clear()
    report = legacy_import(agent=teacher.agent, owner=teacher.user, recall=RECALL_LOG.encode())

    [recall] = report.files
    assert recall.imported == [1, 2, 3, 10]
    assert [line for line, _ in recall.unreadable] == [5, 6, 7, 8, 9]
    thread = Thread.objects.get(owner=teacher.user)
    assert (thread.title, thread.status) == (IMPORT_THREAD_TITLE, "archived")
    runs = list(Run.objects.filter(thread=thread).order_by("created_at"))
    assert [r.created_at for r in runs] == [
        datetime(2024, 3, 1, 10, 0, tzinfo=SHANGHAI),
        datetime(2024, 3, 2, 11, 0, tzinfo=SHANGHAI),
        datetime(2024, 3, 3, tzinfo=SHANGHAI),
        datetime(2024, 3, 6, tzinfo=SHANGHAI),
    ]
    assert {(r.status, r.memory_state) for r in runs} == {("completed", "done")}
    assert RecallEntry.objects.filter(run__in=runs).count() == 4
    # Never sent to a model to be summarised: the cursor is past every imported run.
    assert (thread.summary_upto_at, thread.summary_upto_run_id) == (
        runs[-1].created_at,
        runs[-1].pk,
    )
    # Recalled in a new conversation, dated by the old timestamp.
    hits = recall_search(scope=scope_of(teacher), query=RecallQuery("二叉树遍历的试卷"))
    assert hits[0].run_id == runs[0].pk and hits[0].created_at.startswith("2024-03-01")
    listed = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads?status=archived").json()
    assert [t["title"] for t in listed["results"]] == [IMPORT_THREAD_TITLE]


@pytest.mark.django_db
def test_recall_entries_are_red_line_redacted(teacher: Teacher) -> None:
    line = json.dumps({"ts": "2024-03-01", "input": f"张三身份证{ID_NUMBER}", "output": "好"})
    legacy_import(agent=teacher.agent, owner=teacher.user, recall=line.encode())
    entry = RecallEntry.objects.get()
    assert ID_NUMBER not in entry.text and ID_NUMBER not in entry.terms


@pytest.mark.django_db
def test_a_malformed_file_imports_nothing_and_the_other_file_still_does(teacher: Teacher) -> None:
    report = legacy_import(
        agent=teacher.agent,
        owner=teacher.user,
        core=b'{"facts": ["a", ',
        recall=RECALL_LOG.encode(),
    )
    assert not report.ok
    core, recall = report.files
    assert core.error.startswith("not valid JSON") and core.imported == []
    assert recall.imported == [1, 2, 3, 10]
    assert not CoreFact.objects.exists()


@pytest.mark.django_db
def test_a_crash_midway_leaves_no_half_import(
    teacher: Teacher, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_bulk_create(*args: Any, **kwargs: Any) -> None:
        assert Run.objects.count() == 4  # the runs are in, the entries are next
        raise RuntimeError("disk full")

    monkeypatch.setattr(RecallEntry.objects, "bulk_create", failing_bulk_create)
    with pytest.raises(RuntimeError):
        legacy_import(agent=teacher.agent, owner=teacher.user, recall=RECALL_LOG.encode())
    assert not Run.objects.exists() and not RecallEntry.objects.exists()
    assert not Thread.objects.exists() and not MemoryAuditEvent.objects.exists()


@pytest.mark.django_db
def test_a_dry_run_reports_exactly_and_stores_nothing(teacher: Teacher) -> None:
    dry = legacy_import(
        agent=teacher.agent,
        owner=teacher.user,
        core=CORE.encode(),
        recall=RECALL_LOG.encode(),
        dry_run=True,
    )
    assert not CoreFact.objects.exists() and not Run.objects.exists()
    assert not MemoryAuditEvent.objects.exists() and not Thread.objects.exists()
    real = legacy_import(
        agent=teacher.agent, owner=teacher.user, core=CORE.encode(), recall=RECALL_LOG.encode()
    )
    assert dry.as_dict()["files"] == real.as_dict()["files"]
    assert dry.as_dict()["dry_run"] is True


@pytest.mark.django_db
def test_the_cap_holds_on_import(teacher: Teacher, settings: Any) -> None:
    settings.CORE_FACTS_MAX = 1
    report = legacy_import(agent=teacher.agent, owner=teacher.user, core=CORE.encode())
    assert report.files[0].imported == [3] and report.files[0].over_capacity == [4]


@pytest.mark.django_db
def test_the_owner_must_belong_to_the_agents_school(teacher: Teacher, outsider: Teacher) -> None:
    with pytest.raises(ImportRejected):
        legacy_import(agent=teacher.agent, owner=outsider.user, core=CORE.encode())
    assert not CoreFact.objects.exists()


# -- the command and the admin ---------------------------------------------------------------------
@pytest.mark.django_db
def test_the_command_reports_by_line(teacher: Teacher, tmp_path: Path) -> None:
    core = tmp_path / "core_memory.json"
    core.write_text(CORE, encoding="utf-8")
    recall = tmp_path / "recall_log.jsonl"
    recall.write_text(RECALL_LOG, encoding="utf-8")
    args = ["--agent", str(teacher.agent.pk), "--user", "zhang", "--core", str(core)]
    out = io.StringIO()
    call_command("import_legacy", *args, "--recall", str(recall), "--dry-run", stdout=out)
    text = out.getvalue()
    assert "试运行" in text and "导入 2 条，重复跳过 1 条，红线拒绝 2 条" in text
    assert "第 5 行：(涉及身份证号，略)，未导入" in text
    assert "第 5 行：无法读取（不是有效的 JSON）" in text
    assert not CoreFact.objects.exists()
    out = io.StringIO()
    call_command("import_legacy", *args, "--json", stdout=out)
    assert json.loads(out.getvalue())["files"][0]["imported"] == 2
    assert CoreFact.objects.count() == 2
    with pytest.raises(CommandError, match="no user"):
        call_command(
            "import_legacy",
            "--agent",
            str(teacher.agent.pk),
            "--user",
            "nobody",
            "--core",
            str(core),
        )
    with pytest.raises(CommandError, match="give --core"):
        call_command("import_legacy", "--agent", str(teacher.agent.pk), "--user", "zhang")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="could not be read"):
        call_command(
            "import_legacy",
            "--agent",
            str(teacher.agent.pk),
            "--user",
            "zhang",
            "--core",
            str(bad),
            stdout=io.StringIO(),
        )


@pytest.mark.django_db
def test_the_admin_upload_is_for_the_tenants_administrators(
    teacher: Teacher, outsider: Teacher
) -> None:
    staff = get_user_model().objects.create_user("head", password="pw", is_staff=True)
    Membership.objects.create(tenant=teacher.tenant, user=staff, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(staff)
    url = f"/admin/agents/agent/{teacher.agent.pk}/import-legacy/"
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {
            "owner": "zhang",
            "core": SimpleUploadedFile("core_memory.json", CORE.encode()),
            "recall": SimpleUploadedFile("recall_log.jsonl", RECALL_LOG.encode()),
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "导入 2 条" in page and "导入 4 条" in page
    assert set(CoreFact.objects.values_list("confirmed_by_id", flat=True)) == {staff.pk}
    assert MemoryAuditEvent.objects.filter(action="import", actor_id=staff.pk).count() == 4
    # A teacher of another school is not in the list; another school's agent is a 404.
    response = client.post(
        url, {"owner": "wang", "core": SimpleUploadedFile("c.json", CORE.encode())}
    )
    assert "owner" in response.context["form"].errors
    assert client.get(f"/admin/agents/agent/{outsider.agent.pk}/import-legacy/").status_code == 404
    assert client.post(url, {"owner": "zhang"}).context["form"].errors  # no file
    # A staff member who does not administer the school may not import into it.
    other = make_teacher(tenant_name="第三中学", username="solo", role=Membership.Role.ADMIN)
    other.user.is_staff = True
    other.user.save()
    client.force_login(other.user)
    assert client.get(url).status_code == 404
