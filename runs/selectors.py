"""Access-checked reads of runs (see ``agents.selectors`` for the contract)."""

from __future__ import annotations

from django.http import Http404

from agents.models import Run
from agents.selectors import User, actor_id, is_tenant_admin, tenant_ids_for


def run_get(*, actor: User, run_id: int, owner_only: bool = False) -> Run:
    """The actor's own run, or any run of a tenant the actor administers; else Http404.

    ``owner_only`` leaves out the administrators (what a run was given, its context
    record, is the teacher's own).
    """
    run = (
        Run.objects.visible()
        .filter(pk=run_id, tenant_id__in=tenant_ids_for(actor))
        .select_related("agent", "thread")
        .first()
    )
    if run is None:
        raise Http404
    if run.owner_id == actor_id(actor):
        return run
    if owner_only or not is_tenant_admin(actor=actor, tenant_id=run.tenant_id):
        raise Http404
    return run
