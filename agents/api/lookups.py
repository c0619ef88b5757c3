"""Access-checked lookups made once per request.

A run request needs its agent twice: the school's run throttle counts against the
agent's tenant (agents/api/throttles.py), then the view runs it. Both ask
:func:`request_agent`, which calls :func:`agents.selectors.agent_get` once per request
and agent id and keeps the answer (the agent, or the 404) on the request.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest
from rest_framework.request import Request

from agents.models import Agent
from agents.selectors import agent_get

_MEMO = "_agents_api_agents"


def request_agent(request: Request, agent_id: int | str) -> Agent:
    """``agent_get`` for the request's user, looked up once per request; Http404."""
    # On the Django request: the DRF request proxies reads of unknown attributes to it.
    django_request: HttpRequest = request._request
    memo: dict[str, Agent | None] = django_request.__dict__.setdefault(_MEMO, {})
    key = str(agent_id)
    if key not in memo:
        try:
            memo[key] = agent_get(actor=request.user, agent_id=int(agent_id))
        except Http404:
            memo[key] = None
    agent = memo[key]
    if agent is None:
        raise Http404
    return agent
