"""The OpenAPI schema documents the errors each operation can answer (DEFAULT_SCHEMA_CLASS).

drf-spectacular documents what a view declares (its 200). The errors come from the API's
shared machinery, so they are derived from it here, for every view including ones added
later:

- 400 where a request body or a query parameter is validated;
- 401 where authentication is required, 403 where a session client's unsafe request can
  fail its CSRF check;
- 404 where the path names an object or a list is paginated (a page out of range);
- 413 and 415 where a request body is read;
- 429 (with Retry-After) where the view has throttles or counts wrong passwords
  (``login_lockout = True``).

A view declares any other error itself (``@extend_schema(responses={409: ...})``); what it
declares wins. PATCH bodies are documented as validated: the views here validate a PATCH
body whole (a required field stays required), not DRF's partial way.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import force_instance
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from agents.api.fields import StrictCharField
from agents.api.inputs import StrictInput


class ErrorOutput(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField()


class ThrottledOutput(ErrorOutput):
    retry_after = serializers.IntegerField(
        allow_null=True, help_text="Seconds to wait before trying again."
    )


# {"field": ["message"]} for invalid fields, {"detail", "code"} for a body that cannot be
# parsed. (A schema, not a serializer: its keys are the fields of the request.)
VALIDATION_ERROR: dict[str, Any] = {
    "type": "object",
    "description": "Field name → messages; or detail and code for the request as a whole.",
    "properties": {"detail": {"type": "string"}, "code": {"type": "string"}},
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "Seconds to wait before trying again.",
    }
}
_UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
SSE = "text/event-stream"
# One server-sent event as clients (and schemathesis) read it: its name and its data.
SSE_ERROR_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["error"]},
        "data": {"type": "string", "description": "JSON: the error body."},
    },
}
# What StrictCharField accepts: no NUL, and where it may not be blank a character that is
# not whitespace (as Python's str.strip sees it: Unicode White_Space and U+001C..U+001F).
# Lone surrogates are refused too, but are no Unicode text (RFC 7493) and cannot be written
# in the regex dialects validators use.
TEXT_PATTERN = r"^[^\x00]*$"
NON_BLANK_TEXT_PATTERN = r"^[^\x00]*[^\s\x00\x1c-\x1f][^\x00]*$"


class ApiSchema(AutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        responses: dict[str, Any] = operation["responses"]
        for code, response in self._error_responses(operation).items():
            responses.setdefault(code, response)
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _get_request_for_media_type(self, serializer: Any, direction: str = "request") -> Any:
        # drf-spectacular documents every PATCH body as partial (all fields optional);
        # these views validate it whole.
        method = self.method
        if method == "PATCH":
            self.method = "PUT"
        try:
            return super()._get_request_for_media_type(serializer, direction)
        finally:
            self.method = method

    def _error_responses(self, operation: dict[str, Any]) -> dict[str, Any]:
        has_body = "requestBody" in operation
        parameters = operation.get("parameters", [])
        has_query = any(p.get("in") == "query" for p in parameters)
        has_path_ids = any(p.get("in") == "path" for p in parameters)
        paginated = self._is_list_view() and self._get_paginator() is not None
        needs_login = not any(isinstance(p, AllowAny) for p in self.view.get_permissions())
        found: dict[str, Any] = {}
        if has_body or has_query:
            found["400"] = self._error(
                VALIDATION_ERROR, "Invalid fields, or a body that is not JSON."
            )
        if needs_login:
            found["401"] = self._error(ErrorOutput, "No or invalid credentials.")
            if self.method in _UNSAFE:
                found["403"] = self._error(ErrorOutput, "A session request without its CSRF token.")
        if has_path_ids or paginated:
            found["404"] = self._error(
                ErrorOutput, "No such object among the caller's own (or no such page)."
            )
        if has_body:
            found["413"] = self._error(ErrorOutput, "The body is over the size limit.")
            found["415"] = self._error(ErrorOutput, "The body is not application/json.")
        if self.view.get_throttles() or getattr(self.view, "login_lockout", False):
            found["429"] = self._error(ThrottledOutput, "Too many requests.", headers=RETRY_AFTER)
        return found

    def _error(self, body: Any, description: str, *, headers: dict[str, Any] | None = None) -> Any:
        response = self._get_response_for_code(
            OpenApiResponse(body, description=description), "400", media_types=["application/json"]
        )
        if SSE in self.map_renderers("media_type"):
            # The SSE renderer answers a streaming client's error as one error event.
            response["content"][SSE] = {"schema": SSE_ERROR_EVENT}
        if headers:
            response["headers"] = headers
        return response

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(force_instance(serializer), StrictInput):
            # StrictInput refuses fields it does not know.
            schema["additionalProperties"] = False
        return schema

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        if isinstance(field, StrictCharField) and schema.get("type") == "string":
            # A field that is trimmed and may not be blank needs a non-space character.
            blank_refused = field.trim_whitespace and not field.allow_blank
            schema["pattern"] = NON_BLANK_TEXT_PATTERN if blank_refused else TEXT_PATTERN
