"""The optional third red line for candidates: the memory model judges, rules fall back.

Against the real loopback fake LLM server: a "yes" blocks, "no" keeps, a timeout or an
HTTP failure leaves the rules' decision (never lifts a block), the offline model is
never asked, and every call is a MemoryOp.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from agents.models import Run
from memory.models import CoreCandidate, MemoryOp, RedlineAudit
from memory.prompts import judge_verdict
from memory.redline import Category
from memory.services.candidates import candidates_extract
from tests.factories import Teacher, make_provider, make_teacher
from tests.fakellm import FakeLLMServer

pytestmark = pytest.mark.django_db

# The rules pass this (no grade or health words); a judge may still find it sensitive.
SUBTLE = "三班的小周最近经常请假回家"
GRADE = "李华这次数学不及格"


def _run(teacher: Teacher, text: str) -> Run:
    return Run.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        input=f"记一下：{text}。",
        output="好的。",
        status="completed",
    )


def _router(fake: FakeLLMServer, fact: str, judge: str, on_judge: str = "") -> Any:
    """Answers extraction with ``fact`` and the judge with ``judge``."""

    def reply(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if "红线审核员" in system:
            if on_judge == "sleep":
                time.sleep(1.5)  # longer than the provider's timeout
            return judge
        if on_judge == "fail":
            fake.set_mode("http_500")  # the next request, the judge's, fails
        proposal = {"fact": fact, "evidence": fact, "confidence": 0.9}
        return json.dumps({"facts": [proposal]}, ensure_ascii=False)

    return reply


def _teacher(fake: FakeLLMServer, name: str, timeout: float = 2.0) -> Teacher:
    provider = make_provider(name=f"p-{name}", base_url=fake.base_url, timeout=timeout)
    return make_teacher(tenant_name=f"学校-{name}", username=name, provider=provider)


def _judge_ops(run: Run) -> list[MemoryOp]:
    return list(MemoryOp.objects.filter(run_id=run.pk, kind=MemoryOp.Kind.REDLINE_JUDGE))


@pytest.mark.parametrize(
    ("answer", "category"),
    [("GRADE", Category.GRADE), ("HEALTH", Category.HEALTH), ("identity。", Category.ID_NUMBER)],
)
def test_a_yes_blocks_and_is_audited(answer: str, category: Category) -> None:
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, "yes")
        fake.reply = _router(fake, SUBTLE, answer)
        run = _run(teacher, SUBTLE)
        assert candidates_extract(run=run) == 0
        assert not CoreCandidate.objects.filter(source_run=run).exists()
        audit = RedlineAudit.objects.get()
        assert (audit.category, audit.count, audit.source) == (category.value, 1, "candidate")
        [op] = _judge_ops(run)
        assert op.success and op.input_tokens > 0


def test_a_no_keeps_the_candidate() -> None:
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, "no")
        fake.reply = _router(fake, SUBTLE, "NO")
        run = _run(teacher, SUBTLE)
        assert candidates_extract(run=run) == 1
        assert len(_judge_ops(run)) == 1
        assert not RedlineAudit.objects.exists()


def test_rules_block_before_the_judge_is_asked() -> None:
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, "rules")
        fake.reply = _router(fake, GRADE, "NO")  # a judge that would wrongly allow it
        run = _run(teacher, GRADE)
        assert candidates_extract(run=run) == 0
        assert _judge_ops(run) == []
        assert RedlineAudit.objects.get().category == Category.GRADE.value


@pytest.mark.parametrize("failure", ["sleep", "fail"])
def test_judge_failure_falls_back_to_the_rules(failure: str) -> None:
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, f"f{failure}", timeout=0.5)
        fake.reply = _router(fake, SUBTLE, "GRADE", on_judge=failure)
        run = _run(teacher, SUBTLE)
        # The rules passed it, so the rules' "keep" stands; the failure is on the ledger.
        assert candidates_extract(run=run) == 1
        ops = _judge_ops(run)
        assert ops and not any(op.success for op in ops)
        fake.set_mode("ok")
        fake.reply = _router(fake, GRADE, "NO", on_judge=failure)
        graded = _run(teacher, GRADE)
        # …and a rules block is never lifted by a failing (or any) judge.
        assert candidates_extract(run=graded) == 0


def test_unreadable_answer_leaves_the_rules_decision() -> None:
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, "unreadable")
        fake.reply = _router(fake, SUBTLE, "也许吧，不好说")
        run = _run(teacher, SUBTLE)
        assert candidates_extract(run=run) == 1
        assert len(_judge_ops(run)) == 1


def test_offline_model_is_never_asked(teacher: Teacher) -> None:
    run = _run(teacher, "以后出题都用人教版")
    candidates_extract(run=run)
    assert _judge_ops(run) == []


def test_judge_can_be_switched_off(settings: Any) -> None:
    settings.MEMORY_REDLINE_JUDGE = False
    with FakeLLMServer() as fake:
        teacher = _teacher(fake, "off")
        fake.reply = _router(fake, SUBTLE, "GRADE")
        run = _run(teacher, SUBTLE)
        assert candidates_extract(run=run) == 1
        assert _judge_ops(run) == []


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("NO", (True, None)),
        (" grade\n", (True, Category.GRADE)),
        ("HEALTH。", (True, Category.HEALTH)),
        ("`IDENTITY`", (True, Category.ID_NUMBER)),
        ("YES", (False, None)),
        ("", (False, None)),
        ("GRADE, maybe HEALTH", (False, None)),
    ],
)
def test_judge_verdict_table(reply: str, expected: tuple[bool, Category | None]) -> None:
    assert judge_verdict(reply) == expected
