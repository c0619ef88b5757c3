"""kb_search with real knowledge-base documents: the offline demo and a tool-calling model."""

from __future__ import annotations

import pytest

from memory.models import KBDocument
from memory.services.kb_documents import kb_document_create, kb_document_process
from tests.factories import Teacher, make_teacher
from tests.fakellm import FakeLLMServer, FakeToolCall, ToolCallsReply
from tests.runs.test_tool_loop import chat_bodies, cloud, run  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

EXAM = (
    "# 期末考试说明\n\n## 考试范围\n\n"
    "本学期期末考试范围为第三章栈与队列、第五章树与二叉树，闭卷，考试时间九十分钟。\n\n"
    "## 题型\n\n选择题三十分，简答题四十分，计算题三十分。\n"
)


def add_document(teacher: Teacher, text: str, visibility: str = "agent") -> KBDocument:
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="期末考试说明",
        text=text,
        visibility=visibility,
    )
    kb_document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == KBDocument.Status.READY, document.error
    return document


@pytest.mark.parametrize("stream", [False, True], ids=["sync", "stream"])
def test_the_offline_demo_quotes_the_knowledge_base(teacher: Teacher, stream: bool) -> None:
    add_document(teacher, EXAM)

    body = run(teacher, "请查一下知识库：期末考试范围是哪几章？", stream=stream)

    [record] = body["tool_calls"]
    assert record["status"] == "ok"
    assert record["chunk_ids"]
    assert "第三章栈与队列" in body["output"]


def test_a_model_searches_the_shared_documents_never_a_colleagues_private_one(
    cloud: Teacher,  # noqa: F811 (the fixture imported above)
    fake_llm: FakeLLMServer,
) -> None:
    add_document(cloud, EXAM)
    colleague = make_teacher(tenant_name=cloud.tenant.name, username="li2", agent=cloud.agent)
    add_document(
        colleague,
        "# 私人笔记\n\n期末考试范围 第三章 第五章 的私人答案：秘密。",
        visibility="private",
    )
    fake_llm.set_mode(
        "ok",
        script=[
            ToolCallsReply([FakeToolCall("kb_search", {"query": "期末考试 范围"})]),
            "第三章和第五章。",
        ],
    )

    body = run(cloud, "期末考什么？", stream=True)

    [record] = body["tool_calls"]
    told = chat_bodies(fake_llm)[1]["messages"][-1]["content"]
    assert record["status"] == "ok"
    assert record["chunk_ids"]
    assert "第三章栈与队列" in told
    assert "秘密" not in told
