"""The memory panel (issue #5) through plain HTML forms, with Django's test client.

Candidates are created the way production creates them: a run through the API, then the
after-run job (offline demo provider), which proposes facts from the teacher's own words.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from agents.models import Agent, Membership
from memory.models import CoreCandidate, CoreFact, RedlineAudit
from memory.services.facts import candidate_confirm
from memory.services.jobs import after_run_process
from tests.factories import Teacher, make_teacher

pytestmark = pytest.mark.django_db

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"
ID_NUMBER = "11010519491231002X"


# -- helpers ------------------------------------------------------------------------------
def run(teacher: Teacher, text: str) -> dict[str, Any]:
    """A real run through the API, then its memory job (which proposes candidates)."""
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run", {"input": text}, format="json"
    )
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    after_run_process(run_id=int(body["id"]))
    return body


def candidate(teacher: Teacher, fact: str) -> CoreCandidate:
    return CoreCandidate.objects.get(owner=teacher.user, agent=teacher.agent, fact=fact)


def confirm_url(teacher: Teacher, fact: str) -> str:
    return f"/memory/candidates/{candidate(teacher, fact).pk}/confirm/"


def browser_for(teacher: Teacher, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(teacher.user)
    return client


def page(client: Client, agent: Agent) -> str:
    response = client.get(f"/memory/?agent={agent.pk}")
    assert response.status_code == 200
    return response.content.decode()


def post(client: Client, url: str, agent: Agent, **data: Any) -> Any:
    """POST a panel form; assert the redirect back; return the page it lands on."""
    response = client.post(url, {"agent": agent.pk, **data})
    assert response.status_code == 302, response.content
    assert response["Location"] == f"/memory/?agent={agent.pk}"
    landed = client.get(response["Location"])
    assert landed.status_code == 200
    return landed.content.decode()


def column(html: str, section_id: str) -> str:
    match = re.search(rf'<section[^>]*id="{section_id}".*?</section>', html, re.S)
    assert match, section_id
    return match.group(0)


def flashes(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", m).strip()
        for m in re.findall(r'<p class="notice flash [^"]*">(.*?)</p>', html, re.S)
    ]


# -- access -------------------------------------------------------------------------------
def test_login_required(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    anonymous = Client()
    response = anonymous.get("/memory/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/memory/"
    target = candidate(teacher, "我教八年级数学")
    response = anonymous.post(
        f"/memory/candidates/{target.pk}/confirm/", {"agent": teacher.agent.pk}
    )
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert CoreFact.objects.count() == 0


def test_columns_show_only_the_teachers_own_scope(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    body = run(teacher, THREE_FACTS)
    run(colleague, "我是高一物理老师，以后都用新课标")  # same school, same agent
    run(outsider, "我教九年级化学，以后都用沪教版")
    candidate_confirm(candidate=candidate(teacher, "我教八年级数学"), actor_id=teacher.user.pk)
    candidate_confirm(
        candidate=candidate(colleague, "我是高一物理老师，以后都用新课标"),
        actor_id=colleague.user.pk,
    )

    html = page(browser_for(teacher), teacher.agent)
    facts_col = column(html, "facts-column")
    cands_col = column(html, "candidates-column")
    assert "我教八年级数学" in facts_col
    assert "已确认 1 / 30" in facts_col
    assert "以后出题都用人教版教材" in cands_col
    assert "每次作业都要附答案" in cands_col
    assert "2 条" in cands_col
    assert "物理" not in html and "沪教版" not in html
    # The evidence is quoted and the conversation is linked.
    assert "「以后出题都用人教版教材」" in cands_col
    assert f'href="/chat/?thread={body["thread_id"]}"' in cands_col
    # The default agent is the first one of agent_list: the same page without ?agent=.
    assert "以后出题都用人教版教材" in browser_for(teacher).get("/memory/").content.decode()


def test_other_peoples_items_are_404_and_untouched(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    run(colleague, "我是高一物理老师，以后都用新课标")
    run(outsider, "我教九年级化学，以后都用沪教版")
    theirs = [
        candidate(colleague, "我是高一物理老师，以后都用新课标"),
        candidate(outsider, "我教九年级化学，以后都用沪教版"),
    ]
    outsider_fact = candidate_confirm(candidate=theirs[1], actor_id=outsider.user.pk).fact
    theirs = [
        theirs[0],
        CoreCandidate.objects.create(
            tenant=outsider.tenant,
            agent=outsider.agent,
            owner=outsider.user,
            fact="以后都用沪教版",
            fact_key="以后都用沪教版",
            evidence="以后都用沪教版",
            source_run_id=outsider_fact.source_run_id,
        ),
    ]
    client = browser_for(teacher)
    agent = teacher.agent.pk
    for item in theirs:
        for action in ("confirm", "delete"):
            url = f"/memory/candidates/{item.pk}/{action}/"
            assert client.post(url, {"agent": agent}).status_code == 404
            # Naming the item's own agent does not help: not this teacher's scope.
            assert client.post(url, {"agent": item.agent_id}).status_code == 404
        response = client.post(
            "/memory/candidates/bulk/", {"agent": agent, "action": "delete", "ids": [item.pk]}
        )
        assert response.status_code == 404
    for action, data in (("edit", {"text": "被改了"}), ("delete", {})):
        url = f"/memory/facts/{outsider_fact.pk}/{action}/"
        assert client.post(url, {"agent": agent, **data}).status_code == 404
    # Another school's agent is not a choice.
    assert client.get(f"/memory/?agent={outsider.agent.pk}").status_code == 404
    assert client.get("/memory/?agent=abc").status_code == 404
    assert client.get("/memory/?agent=99999999999999999999").status_code == 404

    assert CoreCandidate.objects.filter(pk__in=[c.pk for c in theirs]).count() == 2
    assert CoreFact.objects.get(pk=outsider_fact.pk).text == "我教九年级化学，以后都用沪教版"
    assert not CoreFact.objects.filter(owner=teacher.user).exists()


def test_a_tenant_admin_acts_only_on_their_own_panel(teacher: Teacher) -> None:
    # The API lets a school admin manage a teacher's items; the panel is one's own memory.
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="admin",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    run(teacher, THREE_FACTS)
    target = candidate(teacher, "我教八年级数学")
    client = browser_for(admin)
    assert f'data-candidate-id="{target.pk}"' not in page(client, teacher.agent)
    response = client.post(f"/memory/candidates/{target.pk}/confirm/", {"agent": teacher.agent.pk})
    assert response.status_code == 404
    assert CoreCandidate.objects.filter(pk=target.pk).exists()


def test_no_agent_is_an_empty_state(db: None) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username="alone", password="x")
    client = Client()
    client.force_login(user)
    html = client.get("/memory/").content.decode()
    assert "你还没有可用的智能体" in html
    assert 'id="memory-columns"' not in html


def test_empty_columns_say_so(teacher: Teacher) -> None:
    html = page(browser_for(teacher), teacher.agent)
    assert "还没有已确认的记忆" in html
    assert "暂时没有待确认的记忆" in html
    assert "已确认 0 / 30" in html


# -- actions through the forms ------------------------------------------------------------
def test_confirm_edit_then_confirm_and_delete(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    client = browser_for(teacher)
    agent = teacher.agent

    html = post(client, confirm_url(teacher, "我教八年级数学"), agent)
    assert flashes(html) == ["已确认：「我教八年级数学」"]
    assert "我教八年级数学" in column(html, "facts-column")
    assert "我教八年级数学" not in column(html, "candidates-column")

    target = candidate(teacher, "以后出题都用人教版教材")
    html = post(
        client,
        f"/memory/candidates/{target.pk}/confirm/",
        agent,
        text="  以后出题都用人教版教材（2024 新版）  ",
    )
    assert flashes(html) == ["已确认：「以后出题都用人教版教材（2024 新版）」"]
    assert "以后出题都用人教版教材（2024 新版）" in column(html, "facts-column")
    fact = CoreFact.objects.get(text="以后出题都用人教版教材（2024 新版）")
    assert (fact.owner, fact.agent, fact.confirmed_by) == (teacher.user, agent, teacher.user)

    html = post(
        client, f"/memory/candidates/{candidate(teacher, '每次作业都要附答案').pk}/delete/", agent
    )
    assert flashes(html) == ["已删除候选记忆：「每次作业都要附答案」"]
    assert "每次作业都要附答案" not in column(html, "candidates-column")
    assert "暂时没有待确认的记忆" in html
    assert "已确认 2 / 30" in html
    assert not CoreCandidate.objects.exists()


def test_fact_edit_and_delete(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    fact = candidate_confirm(
        candidate=candidate(teacher, "我教八年级数学"), actor_id=teacher.user.pk
    ).fact
    client = browser_for(teacher)

    edit = f"/memory/facts/{fact.pk}/edit/"
    html = post(client, edit, teacher.agent, text="我教八年级数学和物理")
    assert flashes(html) == ["已保存：「我教八年级数学和物理」"]
    fact.refresh_from_db()
    assert fact.text == "我教八年级数学和物理"

    html = post(client, edit, teacher.agent, text=f"我的身份证 {ID_NUMBER}")
    assert "敏感信息" in flashes(html)[0]
    fact.refresh_from_db()
    assert fact.text == "我教八年级数学和物理"

    html = post(client, f"/memory/facts/{fact.pk}/delete/", teacher.agent)
    assert flashes(html) == ["已删除记忆：「我教八年级数学和物理」"]
    assert not CoreFact.objects.exists()
    assert "还没有已确认的记忆" in html


def test_bulk_confirm_and_bulk_delete(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    run(teacher, "我是八年级二班的班主任，以后周测都用A4纸")
    client = browser_for(teacher)
    agent = teacher.agent
    ids = {c.fact: c.pk for c in CoreCandidate.objects.all()}
    assert len(ids) == 4

    html = post(
        client,
        "/memory/candidates/bulk/",
        agent,
        action="confirm",
        ids=[ids["我教八年级数学"], ids["以后出题都用人教版教材"]],
    )
    assert flashes(html) == ["已确认 2 条记忆。"]
    assert set(CoreFact.objects.values_list("text", flat=True)) == {
        "我教八年级数学",
        "以后出题都用人教版教材",
    }
    assert "已确认 2 / 30" in html

    html = post(
        client,
        "/memory/candidates/bulk/",
        agent,
        action="delete",
        ids=[ids["每次作业都要附答案"], ids["我是八年级二班的班主任，以后周测都用A4纸"]],
    )
    assert flashes(html) == ["已删除 2 条候选记忆。"]
    assert not CoreCandidate.objects.exists()
    assert CoreFact.objects.count() == 2


def test_bulk_bad_input_is_a_flash_not_an_error(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    client = browser_for(teacher)
    agent = teacher.agent
    one = candidate(teacher, "我教八年级数学").pk
    assert flashes(post(client, "/memory/candidates/bulk/", agent, action="confirm")) == [
        "请先勾选要操作的候选记忆。"
    ]
    assert flashes(post(client, "/memory/candidates/bulk/", agent, action="x", ids=[one])) == [
        "请选择要执行的批量操作。"
    ]
    assert flashes(
        post(client, "/memory/candidates/bulk/", agent, action="delete", ids=["1;drop", one])
    ) == ["所选内容无效，请刷新页面后重试。"]
    assert CoreCandidate.objects.count() == 3


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (f"学生张伟的身份证号是{ID_NUMBER}", "敏感信息"),
        ("李华数学考了58分", "敏感信息"),
        ("   ", "不能为空"),
        ("长" * 301, "过长"),
        ("以后都用人教版\x00", "无效字符"),
    ],
)
def test_a_refused_edit_keeps_the_candidate(teacher: Teacher, text: str, why: str) -> None:
    run(teacher, THREE_FACTS)
    target = candidate(teacher, "以后出题都用人教版教材")
    url = f"/memory/candidates/{target.pk}/confirm/"
    html = post(browser_for(teacher), url, teacher.agent, text=text)
    [message] = flashes(html)
    assert why in message
    assert 'class="notice flash error"' in html
    assert CoreCandidate.objects.filter(pk=target.pk).exists()
    assert "以后出题都用人教版教材" in column(html, "candidates-column")
    assert not CoreFact.objects.exists()
    assert ID_NUMBER not in html and "58分" not in html


def test_red_line_refusals_are_counted_never_stored(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    target = candidate(teacher, "以后出题都用人教版教材")
    post(
        browser_for(teacher),
        f"/memory/candidates/{target.pk}/confirm/",
        teacher.agent,
        text=f"学生张伟的身份证号是{ID_NUMBER}",
    )
    audit = RedlineAudit.objects.get(source=RedlineAudit.Source.FACT)
    assert audit.category == "id_number" and audit.count == 1


def test_cap_and_eviction_preview(teacher: Teacher, settings: Any) -> None:
    settings.CORE_FACTS_MAX = 2
    run(teacher, THREE_FACTS)
    client = browser_for(teacher)
    agent = teacher.agent
    post(client, confirm_url(teacher, "我教八年级数学"), agent)
    html = page(client, agent)
    assert "已确认 1 / 2" in html
    assert 'id="evict-preview"' not in html

    post(client, confirm_url(teacher, "以后出题都用人教版教材"), agent)
    html = page(client, agent)
    assert "已确认 2 / 2" in html
    preview = column(html, "candidates-column")
    # Never used, confirmed first: the least recently used one goes first.
    assert "确认后将淘汰：「我教八年级数学」" in preview

    html = post(client, confirm_url(teacher, "每次作业都要附答案"), agent)
    assert flashes(html) == [
        "已确认：「每次作业都要附答案」",
        "已达上限，已淘汰最久未使用的记忆：「我教八年级数学」",
    ]
    assert set(CoreFact.objects.values_list("text", flat=True)) == {
        "以后出题都用人教版教材",
        "每次作业都要附答案",
    }
    # No candidate left: nothing to preview.
    assert 'id="evict-preview"' not in html


def test_bulk_confirm_at_the_cap_keeps_the_most_confident(teacher: Teacher, settings: Any) -> None:
    settings.CORE_FACTS_MAX = 2
    run(teacher, THREE_FACTS)
    confidence = {"我教八年级数学": 0.9, "以后出题都用人教版教材": 0.8, "每次作业都要附答案": 0.4}
    for fact, value in confidence.items():
        CoreCandidate.objects.filter(fact=fact).update(confidence=value)
    client = browser_for(teacher)
    ids = list(CoreCandidate.objects.values_list("pk", flat=True))
    html = post(client, "/memory/candidates/bulk/", teacher.agent, action="confirm", ids=ids)
    assert flashes(html) == [
        "已确认 3 条记忆。",
        "已达上限，已淘汰最久未使用的记忆：「每次作业都要附答案」",
    ]
    assert set(CoreFact.objects.values_list("text", flat=True)) == {
        "我教八年级数学",
        "以后出题都用人教版教材",
    }


def test_confirming_an_equal_fact_merges(teacher: Teacher) -> None:
    body = run(teacher, THREE_FACTS)
    candidate_confirm(candidate=candidate(teacher, "我教八年级数学"), actor_id=teacher.user.pk)
    twin = CoreCandidate.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        fact="我教八年级数学。",
        fact_key="twin",
        evidence="我教八年级数学",
        source_run_id=body["id"],
    )
    html = post(browser_for(teacher), f"/memory/candidates/{twin.pk}/confirm/", teacher.agent)
    assert flashes(html) == ["已确认：与已有记忆「我教八年级数学」相同，已合并。"]
    assert CoreFact.objects.count() == 1
    assert not CoreCandidate.objects.filter(pk=twin.pk).exists()


def test_the_agent_picker_switches_scope(teacher: Teacher) -> None:
    second = Agent.objects.create(
        tenant=teacher.tenant,
        name="出卷助手",
        system_prompt="你是出卷助手。",
        provider=teacher.agent.provider,
    )
    run(teacher, THREE_FACTS)
    client = browser_for(teacher)
    html = page(client, second)
    assert f'<option value="{second.pk}" selected>出卷助手</option>' in html
    assert f'<option value="{teacher.agent.pk}">' in html
    assert "暂时没有待确认的记忆" in html
    # Items of another agent are not actionable from this agent's panel.
    target = candidate(teacher, "我教八年级数学")
    response = client.post(f"/memory/candidates/{target.pk}/confirm/", {"agent": second.pk})
    assert response.status_code == 404


def test_candidates_are_ordered_by_confidence(teacher: Teacher) -> None:
    body = run(teacher, THREE_FACTS)
    CoreCandidate.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        fact="我们学校用五四制",
        fact_key="我们学校用五四制",
        evidence="我们学校用五四制",
        confidence=0.95,
        source_run_id=body["id"],
    )
    CoreCandidate.objects.filter(fact="每次作业都要附答案").update(confidence=0.3)
    cands = column(page(browser_for(teacher), teacher.agent), "candidates-column")
    order = [cands.index(t) for t in ("我们学校用五四制", "我教八年级数学", "每次作业都要附答案")]
    assert order == sorted(order)
    assert "置信度 95%" in cands and "置信度 30%" in cands


def test_csrf_is_enforced(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    target = candidate(teacher, "我教八年级数学")
    client = browser_for(teacher, enforce_csrf_checks=True)
    html = page(client, teacher.agent)
    assert 'name="csrfmiddlewaretoken"' in html
    response = client.post(f"/memory/candidates/{target.pk}/confirm/", {"agent": teacher.agent.pk})
    assert response.status_code == 403
    response = client.post(
        "/memory/candidates/bulk/",
        {"agent": teacher.agent.pk, "action": "delete", "ids": [target.pk]},
    )
    assert response.status_code == 403
    assert CoreCandidate.objects.count() == 3
    # With the page's token the same form works.
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert token
    response = client.post(
        f"/memory/candidates/{target.pk}/confirm/",
        {"agent": teacher.agent.pk, "csrfmiddlewaretoken": token.group(1)},
    )
    assert response.status_code == 302
    assert CoreFact.objects.filter(text="我教八年级数学").exists()


def test_actions_are_post_only(teacher: Teacher) -> None:
    run(teacher, THREE_FACTS)
    target = candidate(teacher, "我教八年级数学")
    client = browser_for(teacher)
    assert client.get(f"/memory/candidates/{target.pk}/confirm/").status_code == 405
    assert client.get(f"/memory/candidates/{target.pk}/delete/").status_code == 405
    # A form without the agent field is not a panel form.
    assert client.post(f"/memory/candidates/{target.pk}/confirm/").status_code == 404
    assert CoreCandidate.objects.filter(pk=target.pk).exists()
