"""The API's JSON parser (DEFAULT_PARSER_CLASSES): every JSON body, every view, one set of bounds.

DRF's own JSONParser reads the stream without Django's DATA_UPLOAD_MAX_MEMORY_SIZE (the
limit applies to ``request.body`` only), recurses without bound and accepts text that
cannot be stored or written back. This one:

- refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE with 413, from Content-Length before
  reading and from what it read otherwise;
- refuses bytes that are not text in their charset, JSON syntax errors, NaN/Infinity and
  nesting deeper than :data:`agents.api.jsonbody.MAX_DEPTH` with a field-less 400;
- refuses strings and keys with NUL or a lone surrogate, and numbers that are not finite,
  with a 400 naming the field (``{"context": ["context.note：不能包含空字符…"]}``),
  so a view's serializer only ever sees JSON that can be stored and rendered back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer

from agents.api import jsonbody
from agents.api.errors import PayloadTooLarge


def body_limit() -> int | None:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _declared_length(parser_context: Mapping[str, Any]) -> int:
    request = parser_context.get("request")
    meta = getattr(request, "META", {})
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except (TypeError, ValueError):
        return 0


def _encoding(parser_context: Mapping[str, Any]) -> str:
    """The request's charset if it is a text encoding (``bz2_codec`` would decompress)."""
    encoding = str(parser_context.get("encoding") or settings.DEFAULT_CHARSET)
    try:
        "".encode(encoding)
    except (LookupError, UnicodeError) as exc:
        raise ParseError(_("不支持的字符集：%(charset)s。") % {"charset": encoding[:40]}) from exc
    return encoding


def read_body(stream: IO[bytes], *, declared: int) -> bytes:
    """At most the configured limit of bytes; :class:`PayloadTooLarge` beyond it."""
    limit = body_limit()
    if limit is None:
        return stream.read()
    if declared > limit:
        raise PayloadTooLarge(limit=limit)
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(limit=limit)
    return raw


def refuse_unsafe(data: Any) -> None:
    """Raise a 400 naming the field when ``data`` holds something unstorable."""
    unsafe = jsonbody.find_unsafe(data)
    if unsafe is None:
        return
    if isinstance(data, dict) and unsafe.path:
        field = jsonbody.shown_key(str(unsafe.path[0]))
        where = f"{unsafe.where}：" if len(unsafe.path) > 1 else ""
        raise ValidationError({field: [where + unsafe.message]})
    where = f"{unsafe.where}：" if unsafe.path else ""
    raise ParseError(_("请求体无法保存：%(reason)s") % {"reason": where + unsafe.message})


class JSONBodyParser(BaseParser):
    media_type = "application/json"
    renderer_class = JSONRenderer

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        context = parser_context or {}
        if stream is None:
            return {}
        raw = read_body(stream, declared=_declared_length(context))
        encoding = _encoding(context)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(
                _("请求体不是有效的 %(charset)s 文本。") % {"charset": encoding}
            ) from exc
        try:
            data = jsonbody.loads(text)
        except jsonbody.BodyRejected as exc:
            raise ParseError(str(exc)) from exc
        refuse_unsafe(data)
        return data
