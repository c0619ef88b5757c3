from __future__ import annotations

import json
from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from agents.api import jsonbody


class _SurrogateValidator(ProhibitSurrogateCharactersValidator):
    message = _("含有无效的 Unicode 字符（单独的代理项 U+{code_point:04X}）。")


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, lists and objects instead of coercing them.

    NUL and lone surrogates are refused with messages that say so (DRF's Chinese
    catalogue calls a NUL character an "empty string").
    """

    default_error_messages = {"not_a_string": _("必须是字符串。")}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators: list[Any] = [
            validator
            for validator in self.validators
            if not isinstance(
                validator, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator
            )
        ]
        self.validators.append(
            ProhibitNullCharactersValidator(message=_("不能包含空字符（U+0000）。"))
        )
        self.validators.append(_SurrogateValidator())

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.Field):
    """A JSON object that can be stored and rendered back, checked all the way down.

    Keys and values: no NUL, no lone surrogate, finite numbers, at most ``max_depth``
    levels of containers (the object itself is one) and ``max_chars`` characters as
    compact JSON. The same checks as the request parser's (``agents.api.jsonbody``),
    so a value that did not come through the parser (a test, a form) is held to them too.
    """

    default_error_messages = {
        "not_an_object": _("必须是 JSON 对象。"),
        "too_large": _("过大：最多 %(n)d 个字符。"),
    }

    def __init__(self, *, max_depth: int = 8, max_chars: int = 10_000, **kwargs: Any) -> None:
        self.max_depth = max_depth
        self.max_chars = max_chars
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("not_an_object")
        unsafe = jsonbody.find_unsafe(data, max_depth=self.max_depth)
        if unsafe is not None:
            where = f"{self.field_name}.{unsafe.where}" if unsafe.path else self.field_name
            raise serializers.ValidationError(f"{where}：{unsafe.message}")
        if len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) > self.max_chars:
            raise serializers.ValidationError(
                str(self.error_messages["too_large"]) % {"n": self.max_chars}
            )
        return data

    def to_representation(self, value: Any) -> Any:
        return value
