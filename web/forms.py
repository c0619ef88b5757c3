"""What the teacher pages read from a form or a query string, checked once."""

from __future__ import annotations

from typing import cast

from django.http import Http404, HttpRequest

from agents import selectors
from agents.models import Agent


def parse_id(value: str | None) -> int | None:
    """A database id from a form field, or None for anything else."""
    if value is None or not value.isascii() or not value.isdigit() or len(value) > 18:
        return None
    return int(value)


def agent_from(request: HttpRequest, raw_id: str | None) -> Agent:
    """The agent named by the form or query (one of the teacher's), or Http404."""
    agent_id = parse_id(raw_id)
    if agent_id is None:
        raise Http404
    return selectors.agent_get(actor=request.user, agent_id=agent_id)


def actor_id(request: HttpRequest) -> int:
    """The acting teacher (every page view is behind login_required)."""
    return cast(int, request.user.pk)
