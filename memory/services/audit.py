"""The memory's audit trails. Neither ever holds a text.

- Red-line counts (:func:`redline_audit_record`): how many spans the red line blocked,
  by category, scope, source and day.
- Governance events (:func:`audit_record`): the append-only ``MemoryAuditEvent`` — who
  confirmed, rejected, edited, deleted, forgot, exported or imported which memory item,
  or which fact expired; edits carry keyed hashes of the text before and after.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.crypto import salted_hmac

from memory.models import MemoryAuditEvent, RedlineAudit
from memory.scope import Scope

Action = MemoryAuditEvent.Action
ObjectType = MemoryAuditEvent.ObjectType


def redline_audit_record(*, scope: Scope, source: str, counts: Mapping[str, int]) -> None:
    day = timezone.localdate()
    for category, count in counts.items():
        if count <= 0:
            continue
        key = {**scope.filter_kwargs(), "category": str(category), "source": source, "day": day}
        for _attempt in range(3):
            if RedlineAudit.objects.filter(**key).update(count=F("count") + count):
                break
            try:
                with transaction.atomic():
                    RedlineAudit.objects.create(**key, count=count)
                break
            except IntegrityError:
                continue  # created concurrently: the update will find it


def text_hash(text: str) -> str:
    """A keyed hash of a text (HMAC-SHA256 with the secret key): equal texts, equal hashes.

    Keyed, because a plain hash of a short sentence can be confirmed by guessing it.
    """
    return salted_hmac("memory.audit.text", text, algorithm="sha256").hexdigest()


def audit_record(
    *,
    tenant_id: int,
    action: str,
    object_type: str,
    object_id: object = "",
    agent_id: int | None = None,
    owner_id: int | None = None,
    actor_id: int | None = None,
    before: str | None = None,
    after: str | None = None,
    detail: Mapping[str, Any] | None = None,
) -> MemoryAuditEvent:
    """Append one event. ``before``/``after`` are texts; only their hashes are stored.

    ``detail`` must hold numbers, dates and codes only (counts per layer, a validity
    date), never a text of the memory.
    """
    return MemoryAuditEvent.objects.create(
        tenant_id=tenant_id,
        agent_id=agent_id,
        owner_id=owner_id,
        actor_id=actor_id,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        before_hash=text_hash(before) if before is not None else "",
        after_hash=text_hash(after) if after is not None else "",
        detail=dict(detail or {}),
    )


def audit_record_scoped(
    *, scope: Scope, action: str, object_type: str, actor_id: int | None, **kwargs: Any
) -> MemoryAuditEvent:
    """:func:`audit_record` for an item of one memory scope."""
    return audit_record(
        tenant_id=scope.tenant_id,
        agent_id=scope.agent_id,
        owner_id=scope.owner_id,
        action=action,
        object_type=object_type,
        actor_id=actor_id,
        **kwargs,
    )
