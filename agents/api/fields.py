from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, lists and objects instead of coercing them."""

    default_error_messages = {"not_a_string": _("必须是字符串。")}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)
