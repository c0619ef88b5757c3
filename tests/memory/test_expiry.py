"""Term-scoped facts (issue #14): the term calendar, valid_until, expiry in the read path,
the cap counting live facts only, the API and the panel's 已过期 / 续期."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from memory.models import CoreCandidate, CoreFact, MemoryAuditEvent
from memory.scope import Scope
from memory.services.core import facts_live_for_scope
from memory.services.facts import candidate_confirm
from memory.services.sweeper import facts_expire_record
from memory.terms import TermCalendar, TermCalendarError
from tests.cluster import ROOT
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, run_via_api

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"
DEFAULT = TermCalendar.parse(["01-31", "07-15"])


# -- the term calendar (pure) -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("today", "end"),
    [
        (date(2026, 9, 1), date(2027, 1, 31)),  # autumn term
        (date(2026, 12, 31), date(2027, 1, 31)),
        (date(2027, 1, 31), date(2027, 1, 31)),  # the last day is still this term
        (date(2027, 2, 1), date(2027, 7, 15)),  # spring term
        (date(2027, 7, 15), date(2027, 7, 15)),
        (date(2027, 7, 16), date(2028, 1, 31)),  # summer holiday: the next term's end
    ],
)
def test_the_current_term_ends_on_the_next_term_end(today: date, end: date) -> None:
    assert DEFAULT.current_term_end(today) == end


def test_dated_term_ends_mix_with_recurring_ones() -> None:
    calendar = TermCalendar.parse(["2027-01-22", " 07-10 "])
    assert calendar.current_term_end(date(2026, 10, 1)) == date(2027, 1, 22)
    assert calendar.current_term_end(date(2027, 1, 23)) == date(2027, 7, 10)
    only_past = TermCalendar.parse(["2020-01-01"])
    assert only_past.current_term_end(date(2026, 1, 1)) == date(2020, 1, 1)  # says: update me
    leap = TermCalendar.parse(["02-29"])
    assert leap.current_term_end(date(2027, 1, 1)) == date(2027, 2, 28)


@pytest.mark.parametrize("bad", [[], [""], ["13-01"], ["02-30"], ["2027-02-29"], ["1/31"], ["x"]])
def test_a_bad_term_calendar_is_refused(bad: list[str]) -> None:
    with pytest.raises(TermCalendarError):
        TermCalendar.parse(bad)


def test_settings_refuse_a_bad_term_calendar() -> None:
    env = {**os.environ, "MEMORY_TERM_ENDS": "01-31,13-45", "DJANGO_SETTINGS_MODULE": ""}
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured: MEMORY_TERM_ENDS: no such day: '13-45'" in result.stderr


@given(
    today=st.dates(min_value=date(2000, 1, 1), max_value=date(2200, 1, 1)),
    ends=st.lists(
        st.tuples(st.integers(1, 12), st.integers(1, 28)).map(
            lambda md: f"{md[0]:02d}-{md[1]:02d}"
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_the_term_end_is_the_first_on_or_after_today(today: date, ends: list[str]) -> None:
    end = TermCalendar.parse(ends).current_term_end(today)
    assert today <= end <= today + timedelta(days=366)
    for day in range((end - today).days):
        between = today + timedelta(days=day)
        assert f"{between:%m-%d}" not in ends


# -- the read path and the cap -------------------------------------------------------------------
def context_of(teacher: Teacher, run: dict[str, Any]) -> dict[str, Any]:
    return dict(teacher.client.get(f"/api/runs/{run['id']}/context").json())


@pytest.mark.django_db
def test_an_expired_fact_is_never_injected(teacher: Teacher) -> None:
    candidates = candidates_via_job(teacher, THREE_FACTS)
    live, ending_today, expired = (fact_via_confirm(teacher, c) for c in candidates)
    today = timezone.localdate()
    CoreFact.objects.filter(pk=ending_today.pk).update(valid_until=today)
    CoreFact.objects.filter(pk=expired.pk).update(valid_until=today - timedelta(days=1))

    run = run_via_api(teacher, "出一份试卷")

    context = context_of(teacher, run)
    assert set(context["manifest"]["sections"]["core"]["fact_ids"]) == {live.pk, ending_today.pk}
    assert expired.text not in context["injected_text"]
    assert live.text in context["injected_text"]
    # Not even touched as used: the LRU clock of an expired fact stands still.
    assert CoreFact.objects.get(pk=expired.pk).last_used_at is None


@pytest.mark.django_db
def test_the_cap_counts_live_facts_only(teacher: Teacher, settings: Any) -> None:
    settings.CORE_FACTS_MAX = 2
    first, second, third = candidates_via_job(teacher, THREE_FACTS)
    old = fact_via_confirm(teacher, first)
    kept = fact_via_confirm(teacher, second)
    CoreFact.objects.filter(pk=old.pk).update(valid_until=date(2020, 1, 31))

    result = candidate_confirm(candidate=third, actor_id=teacher.user.pk)

    assert result.evicted_id is None  # one live fact + the new one: within the cap
    assert CoreFact.objects.filter(pk=old.pk).exists()  # expired, kept under 已过期
    scope_live = facts_live_for_scope(scope=scope_of(teacher))
    assert set(scope_live.values_list("pk", flat=True)) == {kept.pk, result.fact.pk}


def scope_of(teacher: Teacher) -> Scope:
    return Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)


@pytest.mark.django_db
def test_the_sweeper_records_each_expiry_once(teacher: Teacher) -> None:
    fact = fact_via_confirm(teacher, candidates_via_job(teacher, "我教八年级数学")[0])
    CoreFact.objects.filter(pk=fact.pk).update(valid_until=date(2020, 7, 15))
    assert facts_expire_record() == 1
    assert facts_expire_record() == 0
    event = MemoryAuditEvent.objects.get(action="expire")
    assert (event.object_id, event.actor_id, event.owner_id) == (
        str(fact.pk),
        None,
        teacher.user.pk,
    )
    assert event.detail == {"valid_until": "2020-07-15"}
    # Renewed, then expired again: recorded again.
    teacher.client.patch(f"/api/memory/facts/{fact.pk}", {"valid_until": None}, format="json")
    CoreFact.objects.filter(pk=fact.pk).update(valid_until=date(2021, 1, 31))
    assert facts_expire_record() == 1


# -- the API --------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_confirm_takes_a_validity(teacher: Teacher, settings: Any) -> None:
    settings.MEMORY_TERM_CALENDAR = TermCalendar.parse(["2099-01-31"])
    first, second, third = candidates_via_job(teacher, THREE_FACTS)
    for candidate, given_value, stored in (
        (first, "term", date(2099, 1, 31)),
        (second, "2030-07-15", date(2030, 7, 15)),
        (third, None, None),
    ):
        response = teacher.client.post(
            f"/api/memory/candidates/{candidate.pk}/confirm",
            {"valid_until": given_value},
            format="json",
        )
        assert response.status_code == 200, response.content
        assert response.json()["fact"]["valid_until"] == (stored.isoformat() if stored else None)
        assert CoreFact.objects.get(pk=response.json()["fact"]["id"]).valid_until == stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    "bad", ["2027-02-30", "31/01/2027", "tomorrow", "", 20270131, True, ["2027-01-31"]]
)
def test_an_invalid_date_is_a_400_and_changes_nothing(teacher: Teacher, bad: Any) -> None:
    fact = fact_via_confirm(teacher, candidates_via_job(teacher, "我教八年级数学")[0])
    response = teacher.client.patch(
        f"/api/memory/facts/{fact.pk}", {"valid_until": bad}, format="json"
    )
    assert response.status_code == 400
    assert "valid_until" in response.json()
    assert CoreFact.objects.get(pk=fact.pk).valid_until is None
    candidate = candidates_via_job(teacher, "以后出题都用人教版教材")[0]
    response = teacher.client.post(
        f"/api/memory/candidates/{candidate.pk}/confirm", {"valid_until": bad}, format="json"
    )
    assert response.status_code == 400
    assert CoreCandidate.objects.filter(pk=candidate.pk).exists()


@pytest.mark.django_db
def test_patch_reads_and_writes_valid_until(teacher: Teacher, outsider: Teacher) -> None:
    fact = fact_via_confirm(teacher, candidates_via_job(teacher, "我教八年级数学")[0])
    url = f"/api/memory/facts/{fact.pk}"
    past = teacher.client.patch(url, {"valid_until": "2020-01-31"}, format="json")
    assert past.status_code == 200
    assert past.json()["valid_until"] == "2020-01-31" and past.json()["expired"] is True
    assert past.json()["text"] == fact.text  # only the validity changed
    listed = teacher.client.get(f"/api/agents/{teacher.agent.pk}/memory/facts").json()
    assert (listed["count"], listed["expired_count"]) == (0, 1)
    assert listed["results"][0]["expired"] is True
    assert date.fromisoformat(listed["term_end"]) >= timezone.localdate()
    renewed = teacher.client.patch(url, {"valid_until": "term"}, format="json").json()
    assert renewed["expired"] is False and renewed["valid_until"] == listed["term_end"]
    both = teacher.client.patch(
        url, {"text": "我教九年级数学", "valid_until": None}, format="json"
    ).json()
    assert (both["text"], both["valid_until"]) == ("我教九年级数学", None)
    assert teacher.client.patch(url, {}, format="json").status_code == 400
    assert outsider.client.patch(url, {"valid_until": None}, format="json").status_code == 404


# -- the panel (plain forms; the browser test drives it with JavaScript) ---------------------
@pytest.mark.django_db
def test_the_panel_shows_expired_facts_apart_and_renews_them(
    teacher: Teacher, settings: Any
) -> None:
    settings.MEMORY_TERM_CALENDAR = TermCalendar.parse(["2099-01-31"])
    first, second, third = candidates_via_job(teacher, THREE_FACTS)
    live = fact_via_confirm(teacher, first)
    old = fact_via_confirm(teacher, second)
    CoreFact.objects.filter(pk=old.pk).update(valid_until=date(2020, 7, 15))
    browser = Client()
    browser.force_login(teacher.user)
    page = browser.get(f"/memory/?agent={teacher.agent.pk}").content.decode()
    assert "已确认 1 / 30" in page
    expired_part = page[page.index('id="expired-section"') :]
    assert old.text in expired_part and live.text not in expired_part
    assert "续期" in expired_part and "2020-07-15" in expired_part
    assert "本学期（至 2099-01-31）" in page

    response = browser.post(
        f"/memory/facts/{old.pk}/renew/", {"agent": teacher.agent.pk, "validity": "term"}
    )
    assert response.status_code == 302
    assert CoreFact.objects.get(pk=old.pk).valid_until == date(2099, 1, 31)
    page = browser.get(f"/memory/?agent={teacher.agent.pk}").content.decode()
    assert 'id="expired-section"' not in page and "已确认 2 / 30" in page

    # Confirming with a date of the teacher's choice; a bad date is refused, kept.
    response = browser.post(
        f"/memory/candidates/{third.pk}/confirm/",
        {"agent": teacher.agent.pk, "validity": "date", "valid_until_date": "2099-02-30"},
        follow=True,
    )
    assert "请选择有效的日期" in response.content.decode()
    assert CoreCandidate.objects.filter(pk=third.pk).exists()
    browser.post(
        f"/memory/candidates/{third.pk}/confirm/",
        {"agent": teacher.agent.pk, "validity": "date", "valid_until_date": "2030-07-15"},
    )
    assert CoreFact.objects.get(text=third.fact).valid_until == date(2030, 7, 15)
