"""The bases of input serializers: request bodies (:class:`StrictInput`) and query strings
(:class:`QueryInput`).

A body field the endpoint does not know is refused by name (a misspelt ``thread_id``
would otherwise start a new conversation in silence). Query strings are not held to
that: pagination and other parameters share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from agents.api.jsonbody import shown_key

UNKNOWN_FIELD = _("未知字段。")


class StrictInput(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(str(key) for key in data if key not in writable)
            if unknown:
                raise serializers.ValidationError(
                    {shown_key(key): [str(UNKNOWN_FIELD)] for key in unknown[:20]}
                )
        return super().to_internal_value(data)


class QueryInput(serializers.Serializer):
    """Query parameters, each as given (its last value if repeated).

    DRF reads a QueryDict as an HTML form, where an empty value means "not given": so
    ``?status=`` silently meant the default and ``?limit=`` ten. Here an empty value is
    a value like any other, and refused where the parameter does not allow it.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, QueryDict):
            data = {key: data.get(key) for key in data}
        return super().to_internal_value(data)
