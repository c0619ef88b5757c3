"""Run limits per teacher and per school: DRF's throttles on the shared limits cache.

DRF's SimpleRateThrottle (a sliding window of request times per key) keeps its history
in a Django cache. Its default is the ``default`` cache, which is per process here; these
use the ``limits`` cache (settings.LIMITS_CACHE: the database, or Redis when
LIMITS_CACHE_URL is set), so every web process counts against the same window. Rates are
read from settings on each request (RUN_RATE_USER, RUN_RATE_TENANT).

Each run costs model money, so the limit is on starting runs (sync and stream alike);
a request refused as invalid still counts, as any request to start one does.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.http import Http404
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from agents.api.lookups import request_agent


class _SharedThrottle(SimpleRateThrottle):
    rate_setting = ""

    def __init__(self) -> None:
        # Read per request, not at import: tests and operators change the settings.
        self.cache: BaseCache = caches[settings.LIMITS_CACHE]
        super().__init__()

    def get_rate(self) -> str:
        return str(getattr(settings, self.rate_setting))


class RunUserThrottle(_SharedThrottle):
    """RUN_RATE_USER runs per period for one teacher, whatever the agent or school."""

    scope = "run-user"
    rate_setting = "RUN_RATE_USER"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user is None or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class RunTenantThrottle(_SharedThrottle):
    """RUN_RATE_TENANT runs per period on the agents of one school, all teachers together.

    The school is the agent's, looked up through the access check (once per request:
    the view gets the same agent): a request naming another school's agent is not
    counted against that school (the view answers 404).
    """

    scope = "run-tenant"
    rate_setting = "RUN_RATE_TENANT"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user is None or not request.user.is_authenticated:
            return None
        try:
            agent = request_agent(request, view.kwargs["agent_id"])
        except (Http404, KeyError):
            return None
        return self.cache_format % {"scope": self.scope, "ident": agent.tenant_id}


RUN_THROTTLES = [RunUserThrottle, RunTenantThrottle]
