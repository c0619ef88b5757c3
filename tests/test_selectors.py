"""The access-checked getters: who sees what, and another tenant's ids look missing.

One table per object and actor, and a hypothesis property over ids (real ids of both
schools mixed with made-up ones): a getter never hands out another school's object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.models import Agent, Membership
from agents.selectors import agent_get
from memory.scope import Scope
from memory.selectors import candidate_get, candidates_get, fact_get, thread_get
from runs.selectors import run_get
from tests.factories import (
    Teacher,
    candidates_via_job,
    fact_via_confirm,
    make_provider,
    make_teacher,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(teacher: Teacher, colleague: Teacher, outsider: Teacher) -> dict[str, Any]:
    """The teacher's objects, and every kind of actor around them."""
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="boss",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    stranger = make_teacher(tenant_name="第三中学", username="zhao")
    Membership.objects.filter(user=stranger.user).delete()  # a user of no school
    candidates = candidates_via_job(teacher, "我教八年级数学。以后出题都用人教版教材")
    fact = fact_via_confirm(teacher, candidates[0])
    run = candidates[1].source_run
    actors = {
        "owner": teacher,
        "colleague": colleague,
        "admin": admin,
        "outsider": outsider,
        "stranger": stranger,
    }
    return {
        "actors": actors,
        "agent": teacher.agent,
        "thread": run.thread,
        "run": run,
        "candidate": candidates[1],
        "fact": fact,
        "outsider_candidates": candidates_via_job(outsider, "我教九年级化学，以后都用沪教版"),
    }


def getters(world: dict[str, Any]) -> dict[str, Callable[[Any], Any]]:
    own_scope = lambda actor: Scope.for_agent(world["agent"], owner_id=actor.pk)  # noqa: E731
    return {
        "agent": lambda a: agent_get(actor=a, agent_id=world["agent"].pk),
        "thread": lambda a: thread_get(actor=a, thread_id=world["thread"].pk),
        "run": lambda a: run_get(actor=a, run_id=world["run"].pk),
        "run context": lambda a: run_get(actor=a, run_id=world["run"].pk, owner_only=True),
        "candidate": lambda a: candidate_get(actor=a, candidate_id=world["candidate"].pk),
        "fact": lambda a: fact_get(actor=a, fact_id=world["fact"].pk),
        # The panel: one's own scope only, even for a school administrator.
        "candidate in panel": lambda a: candidate_get(
            actor=a, candidate_id=world["candidate"].pk, scope=own_scope(a)
        ),
        "fact in panel": lambda a: fact_get(actor=a, fact_id=world["fact"].pk, scope=own_scope(a)),
    }


VISIBLE_TO = {
    "agent": {"owner", "colleague", "admin"},
    "thread": {"owner"},
    "run": {"owner", "admin"},
    "run context": {"owner"},
    "candidate": {"owner", "admin"},
    "fact": {"owner", "admin"},
    "candidate in panel": {"owner"},
    "fact in panel": {"owner"},
}


@pytest.mark.parametrize("what", sorted(VISIBLE_TO))
@pytest.mark.parametrize("who", ["owner", "colleague", "admin", "outsider", "stranger"])
def test_who_sees_what(world: dict[str, Any], what: str, who: str) -> None:
    get = getters(world)[what]
    actor = world["actors"][who].user
    if who in VISIBLE_TO[what]:
        assert get(actor).pk == world[what.split()[0]].pk
    else:
        with pytest.raises(Http404):
            get(actor)


def test_a_bulk_get_is_all_or_404(world: dict[str, Any]) -> None:
    owner = world["actors"]["owner"].user
    mine = world["candidate"].pk
    assert [c.pk for c in candidates_get(actor=owner, candidate_ids=[mine])] == [mine]
    theirs = world["outsider_candidates"][0].pk
    with pytest.raises(Http404):
        candidates_get(actor=owner, candidate_ids=[mine, theirs])
    with pytest.raises(Http404):
        candidates_get(actor=owner, candidate_ids=[mine, 987654])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_another_schools_ids_look_missing(world: dict[str, Any], data: st.DataObject) -> None:
    outsider = world["actors"]["outsider"]
    real_ids = [world[k].pk for k in ("agent", "run", "candidate", "fact")]
    real_ids += [c.pk for c in world["outsider_candidates"]]
    candidate_id = data.draw(st.sampled_from(real_ids) | st.integers(0, 10**6))
    thread_id = data.draw(
        st.sampled_from([world["thread"].pk, "th_0"])
        | st.from_regex(r"th_[0-9a-f]{1,16}", fullmatch=True)
    )
    attempts: list[Callable[[], Any]] = [
        lambda: agent_get(actor=outsider.user, agent_id=candidate_id),
        lambda: run_get(actor=outsider.user, run_id=candidate_id),
        lambda: candidate_get(actor=outsider.user, candidate_id=candidate_id),
        lambda: fact_get(actor=outsider.user, fact_id=candidate_id),
        lambda: thread_get(actor=outsider.user, thread_id=thread_id),
    ]
    for attempt in attempts:
        try:
            found = attempt()
        except Http404:
            continue
        assert found.tenant_id == outsider.tenant.pk


def _fields(instance: Any) -> dict[str, Any]:
    return {
        field.attname: getattr(instance, field.attname)
        for field in type(instance)._meta.concrete_fields
    }


@pytest.mark.parametrize("memory_provider", [False, True])
def test_agent_get_returns_what_the_orm_returns(teacher: Teacher, memory_provider: bool) -> None:
    """agent_get is plain SQL: the agent, its tenant and both providers equal the ORM's,
    field by field and with the backend's own types (decimals, datetimes, booleans)."""
    agent = teacher.agent
    if memory_provider:
        agent.memory_provider = make_provider(name="记忆模型", base_url="http://127.0.0.1:9/v1")
        agent.archive_artifacts = True
        agent.save()
    orm = Agent.objects.select_related("tenant", "provider", "memory_provider").get(pk=agent.pk)
    with CaptureQueriesContext(connection) as queries:
        got = agent_get(actor=teacher.user, agent_id=agent.pk)
        related = (got.tenant, got.provider, got.memory_provider)
    assert len(queries) == 1  # the related objects came with it
    assert _fields(got) == _fields(orm)
    assert _fields(related[0]) == _fields(orm.tenant)
    assert _fields(related[1]) == _fields(orm.provider)
    if memory_provider:
        assert related[2] is not None and orm.memory_provider is not None
        assert _fields(related[2]) == _fields(orm.memory_provider)
    else:
        assert related[2] is None
    assert got._state.adding is False and got._state.db == "default"
    got.name = "改名"
    got.save()  # an instance the ORM can write back
    assert Agent.objects.get(pk=agent.pk).name == "改名"
