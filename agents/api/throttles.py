"""Run limits per teacher and per school, shared by every web process.

RUN_RATE_USER runs per period for one teacher, whatever the agent or school, and
RUN_RATE_TENANT runs per period on the agents of one school, all teachers together
(rates read from settings on each request). Both are buckets of agents/ratelimits.py,
taken in one statement per request: on the database, or on Redis when LIMITS_CACHE_URL
is set. Each run costs model money, so the limit is on starting runs (sync and stream
alike); a request refused as invalid still counts, as any request to start one does.

The school is the agent's, looked up through the access check (once per request: the
view gets the same agent): a request naming another school's agent is not counted
against that school (the view answers 404), only against its teacher.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from agents.api.lookups import request_agent
from agents.ratelimits import Rate, Take, rate_take


def run_limit_takes(request: Request, view: Any) -> list[Take]:
    """The buckets a run request is counted in (none for an anonymous request)."""
    if request.user is None or not request.user.is_authenticated:
        return []
    takes = [Take(key=f"run-user:{request.user.pk}", rate=Rate.parse(settings.RUN_RATE_USER))]
    try:
        agent = request_agent(request, view.kwargs["agent_id"])
    except (Http404, KeyError, ValueError):
        return takes
    takes.append(
        Take(key=f"run-tenant:{agent.tenant_id}", rate=Rate.parse(settings.RUN_RATE_TENANT))
    )
    return takes


class RunThrottle(BaseThrottle):
    """The teacher's and the school's run limits; the wait is the longer of the refusals."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        waits = rate_take(run_limit_takes(request, view))
        refused = [wait for wait in waits if wait > 0]
        self._wait = max(refused, default=None)
        return not refused

    def wait(self) -> float | None:
        return self._wait


RUN_THROTTLES = [RunThrottle]
