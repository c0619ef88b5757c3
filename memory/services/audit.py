"""Red-line audit counts: by category, scope, source and day. Never the blocked text."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memory.models import RedlineAudit
from memory.scope import Scope


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
