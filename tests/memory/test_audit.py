"""The audit trail (issue #14): who confirmed, rejected, edited, deleted, forgot, exported.

Events are append-only, hold keyed hashes of texts (never a text), name the actor — an
administrator confirming a teacher's candidate is the actor, the teacher the owner — and
are listed for their owner by the API (paginated) and for tenant administrators in the
admin.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Membership
from memory.models import CoreCandidate, CoreFact, MemoryAuditEvent
from memory.services.audit import text_hash
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, make_teacher

pytestmark = pytest.mark.django_db

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"


def events(teacher: Teacher) -> list[dict[str, Any]]:
    response = teacher.client.get(f"/api/agents/{teacher.agent.pk}/memory/audit?page_size=100")
    assert response.status_code == 200
    return list(response.json()["results"])


def test_each_action_is_an_event_with_its_actor_and_no_text(teacher: Teacher) -> None:
    first, second, third = candidates_via_job(teacher, THREE_FACTS)
    client = teacher.client
    confirmed = client.post(
        f"/api/memory/candidates/{first.pk}/confirm", {"text": "我教九年级数学"}, format="json"
    ).json()["fact"]
    client.post(f"/api/memory/candidates/{second.pk}/reject")
    client.patch(f"/api/memory/facts/{confirmed['id']}", {"text": "我教九年级物理"}, format="json")
    client.delete(f"/api/memory/facts/{confirmed['id']}")
    client.get(f"/api/agents/{teacher.agent.pk}/memory/export")

    listed = events(teacher)

    assert [e["action"] for e in listed] == ["export", "delete", "edit", "reject", "confirm"]
    assert {e["actor"] for e in listed} == {teacher.user.username}
    confirm = listed[-1]
    assert (confirm["object_type"], confirm["object_id"]) == ("candidate", str(first.pk))
    assert confirm["before_hash"] == text_hash(first.fact)
    assert confirm["after_hash"] == text_hash("我教九年级数学")
    assert confirm["detail"] == {"fact_id": confirmed["id"], "merged": False, "valid_until": None}
    edit = listed[2]
    assert (edit["before_hash"], edit["after_hash"]) == (
        text_hash("我教九年级数学"),
        text_hash("我教九年级物理"),
    )
    assert edit["detail"]["fields"] == ["text"]
    # Hashes are keyed: not the plain SHA-256 of the text anyone could compute.
    assert edit["after_hash"] != hashlib.sha256("我教九年级物理".encode()).hexdigest()
    # No text of the memory anywhere in the trail.
    stored = str(list(MemoryAuditEvent.objects.values()))
    for text in (first.fact, second.fact, "我教九年级数学", "我教九年级物理", third.fact):
        assert text not in stored


def test_a_tenant_admin_confirming_a_teachers_candidate_is_the_actor(teacher: Teacher) -> None:
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="principal",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    first, second, _ = candidates_via_job(teacher, THREE_FACTS)
    assert admin.client.post(f"/api/memory/candidates/{first.pk}/confirm").status_code == 200
    fact = CoreFact.objects.get(text=first.fact)
    admin.client.patch(f"/api/memory/facts/{fact.pk}", {"valid_until": "2030-01-31"}, format="json")
    admin.client.post(f"/api/memory/candidates/{second.pk}/reject")

    listed = events(teacher)  # the teacher sees what was done to their memory, and by whom

    assert [(e["action"], e["actor"]) for e in listed] == [
        ("reject", "principal"),
        ("edit", "principal"),
        ("confirm", "principal"),
    ]
    event = MemoryAuditEvent.objects.get(action="confirm")
    assert (event.actor_id, event.owner_id) == (admin.user.pk, teacher.user.pk)
    assert events(admin) == []  # the admin's own memory with the agent has none


def test_the_admin_action_records_the_operator(teacher: Teacher) -> None:
    operator = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw")
    Membership.objects.create(tenant=teacher.tenant, user=operator, role=Membership.Role.ADMIN)
    candidate = candidates_via_job(teacher, "我教八年级数学")[0]
    client = Client()
    client.force_login(operator)
    client.post(
        "/admin/memory/corecandidate/",
        {"action": "confirm_candidates", "_selected_action": [candidate.pk]},
    )
    event = MemoryAuditEvent.objects.get(action="confirm")
    assert (event.actor_id, event.owner_id, event.object_id) == (
        operator.pk,
        teacher.user.pk,
        str(candidate.pk),
    )


def test_events_are_append_only(teacher: Teacher) -> None:
    fact_via_confirm(teacher, candidates_via_job(teacher, "我教八年级数学")[0])
    event = MemoryAuditEvent.objects.get()
    event.action = "delete"
    with pytest.raises(TypeError):
        event.save()
    with pytest.raises(TypeError):
        event.delete()
    with pytest.raises(TypeError):
        MemoryAuditEvent.objects.filter(pk=event.pk).update(action="delete")
    with pytest.raises(TypeError):
        MemoryAuditEvent.objects.all().delete()
    assert MemoryAuditEvent.objects.get().action == "confirm"


def test_the_trail_outlives_the_item_and_the_actor(teacher: Teacher) -> None:
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="principal",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    candidate = candidates_via_job(teacher, "我教八年级数学")[0]
    admin.client.post(f"/api/memory/candidates/{candidate.pk}/confirm")
    CoreFact.objects.all().delete()
    admin.user.delete()
    listed = events(teacher)
    assert [(e["action"], e["actor"]) for e in listed] == [("confirm", None)]
    assert MemoryAuditEvent.objects.get().actor_id is not None  # the id is kept


def test_the_audit_api_is_paginated_and_the_owners_alone(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    for candidate in candidates_via_job(teacher, THREE_FACTS):
        teacher.client.post(f"/api/memory/candidates/{candidate.pk}/reject")
    url = f"/api/agents/{teacher.agent.pk}/memory/audit"
    page = teacher.client.get(f"{url}?page_size=2").json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert teacher.client.get(f"{url}?page=99").status_code == 404
    assert colleague.client.get(url).json()["count"] == 0  # same agent, own memory only
    assert outsider.client.get(url).status_code == 404
    assert Client().get(url).status_code == 401
    with CaptureQueriesContext(connection) as queries:
        teacher.client.get(f"{url}?page_size=100")
    assert len(queries) <= 6  # auth, agent, count, page with actors


def test_tenant_admins_see_their_tenants_trail_in_the_admin(
    teacher: Teacher, outsider: Teacher
) -> None:
    for t in (teacher, outsider):
        t.client.post(
            f"/api/memory/candidates/{candidates_via_job(t, '我教八年级数学')[0].pk}/reject"
        )
    staff = get_user_model().objects.create_user("head", password="pw", is_staff=True)
    Membership.objects.create(tenant=teacher.tenant, user=staff, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(staff)
    response = client.get("/admin/memory/memoryauditevent/")
    assert response.status_code == 200
    shown = list(response.context["cl"].result_list)
    assert [e.owner_id for e in shown] == [teacher.user.pk]
    assert client.get(f"/admin/memory/memoryauditevent/{shown[0].pk}/delete/").status_code == 403
    # A staff member who administers no tenant sees nothing of it.
    other = get_user_model().objects.create_user("clerk", password="pw", is_staff=True)
    client.force_login(other)
    assert client.get("/admin/memory/memoryauditevent/").status_code == 403
    assert CoreCandidate.objects.count() == 0
