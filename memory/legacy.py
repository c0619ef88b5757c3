"""Reading the old platform's memory files: ``core_memory.json`` and ``recall_log.jsonl``.

Pure (no Django, no database): bytes in, items with their line numbers out, and every
line that cannot be read reported with its number and the reason. The service
(``memory.services.legacy_import``) decides what to import.

Accepted shapes, as such files are found in practice:

core memory (one JSON document)
    a list of strings; ``{"facts": [...]}``; ``{"items": [{"text"|"content"|"fact": ...}]}``
    (a list item may also be a plain string, and ``facts`` items objects); or a
    ``{key: value}`` object, each pair one fact ``key：value`` (a list value is joined
    with 、). In the ``facts``/``items`` shapes other top-level keys (a version, a date)
    are ignored.
recall log (JSON Lines)
    one object per line with a timestamp (``ts``|``time``|``created_at``: ISO 8601,
    ``YYYY-MM-DD HH:MM[:SS]``, ``YYYY/MM/DD ...``, a date, or Unix seconds or
    milliseconds) and ``input``|``query``|``prompt`` plus (optionally)
    ``output``|``result``|``summary``. Blank lines are skipped.

Text is UTF-8 (a byte-order mark is allowed); a file that is not valid UTF-8 is read as
GB 18030 (the superset of GBK that older Chinese Windows tools write).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, tzinfo
from typing import Any

CORE_TEXT_KEYS = ("text", "content", "fact")
RECALL_TIME_KEYS = ("ts", "time", "created_at")
RECALL_INPUT_KEYS = ("input", "query", "prompt")
RECALL_OUTPUT_KEYS = ("output", "result", "summary")
# Why a line is unreadable (the service words them for people).
NOT_TEXT = "not_text"  # a core item that is neither a string nor an object with a text
EMPTY = "empty"
NOT_JSON = "not_json"
NOT_OBJECT = "not_object"
NO_TIMESTAMP = "no_timestamp"  # none of ts, time, created_at, or not a time
NO_INPUT = "no_input"  # none of input, query, prompt, or empty
OUTPUT_NOT_TEXT = "output_not_text"
TOO_LONG = "too_long"
# Unix timestamps above this are milliseconds (1e11 seconds is the year 5138).
_MILLISECONDS_FROM = 100_000_000_000

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
# 2024/3/1, 2024-3-1 10:00: a date with slashes or without leading zeros.
_LOOSE_DATE = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})((?:[ T].*)?)")


class LegacyFileError(ValueError):
    """The whole file cannot be read (not text, not JSON, not one of the shapes)."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class Unreadable:
    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class CoreItem:
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class RecallItem:
    line: int
    at: datetime
    input: str
    output: str


@dataclass
class Parsed[T]:
    items: list[T] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)


def decode(data: bytes) -> str:
    """The file's text: UTF-8 (BOM allowed), else GB 18030; else :class:`LegacyFileError`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030")
    except UnicodeDecodeError as exc:
        raise LegacyFileError("not a text file (neither UTF-8 nor GB 18030)") from exc


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip(text: str, index: int) -> int:
    match = _WS.match(text, index)
    return match.end() if match else index


def _array(text: str, index: int) -> Iterator[tuple[int, Any]]:
    """The (offset, value) of each element of the JSON array starting at ``index``."""
    index = _skip(text, index + 1)  # past "["
    if text[index] == "]":
        return
    while True:
        value, end = _DECODER.raw_decode(text, index)
        yield index, value
        index = _skip(text, end)
        if text[index] == "]":
            return
        index = _skip(text, index + 1)  # past ","


def _object(text: str, index: int) -> Iterator[tuple[int, str, int, Any]]:
    """The (key offset, key, value offset, value) of each member of a JSON object."""
    index = _skip(text, index + 1)  # past "{"
    if text[index] == "}":
        return
    while True:
        key, end = _DECODER.raw_decode(text, index)
        value_at = _skip(text, _skip(text, end) + 1)  # past ":"
        value, end = _DECODER.raw_decode(text, value_at)
        yield index, key, value_at, value
        index = _skip(text, end)
        if text[index] == "}":
            return
        index = _skip(text, index + 1)  # past ","


def _flat(value: str) -> str:
    return " ".join(value.split())


def _item_text(value: Any) -> str | None:
    """A fact's text from a list element: a string, or an object with a text key."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in CORE_TEXT_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _pair_text(key: str, value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return f"{key}：{value}"
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return f"{key}：{'、'.join(str(v) for v in value)}"
    return None


def parse_core(text: str) -> Parsed[CoreItem]:
    """The facts of a ``core_memory.json`` (see the module docstring for the shapes)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LegacyFileError(f"not valid JSON: {exc.msg}", line=exc.lineno) from exc
    start = _skip(text, 0)
    parsed: Parsed[CoreItem] = Parsed()

    def add(offset: int, value: str | None) -> None:
        line = _line(text, offset)
        if value is None:
            parsed.unreadable.append(Unreadable(line, NOT_TEXT))
        elif not _flat(value):
            parsed.unreadable.append(Unreadable(line, EMPTY))
        else:
            parsed.items.append(CoreItem(line, _flat(value)))

    if isinstance(document, list):
        for offset, value in _array(text, start):
            add(offset, _item_text(value))
        return parsed
    if not isinstance(document, dict):
        raise LegacyFileError("neither a list nor an object of facts", line=_line(text, start))
    members = list(_object(text, start))
    for key_name in ("facts", "items"):
        listed = [(at, value) for _, key, at, value in members if key == key_name]
        if listed and isinstance(listed[-1][1], list):
            for offset, value in _array(text, listed[-1][0]):
                add(offset, _item_text(value))
            return parsed
    for key_at, key, _value_at, value in members:
        add(key_at, _pair_text(_flat(key), value) if _flat(key) else None)
    return parsed


def parse_timestamp(value: Any, *, tz: tzinfo) -> datetime | None:
    """A log timestamp as an aware datetime (naive ones are in ``tz``), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) >= _MILLISECONDS_FROM else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    raw = value.strip()
    if re.fullmatch(r"\d{9,14}(\.\d+)?", raw):
        return parse_timestamp(float(raw), tz=tz)
    if dated := _LOOSE_DATE.fullmatch(raw):
        year, month, day, rest = dated.groups()
        if clock := re.match(r"[ T](\d{1,2})(:.*)", rest):
            rest = f"T{int(clock[1]):02d}{clock[2]}"
        raw = f"{year}-{int(month):02d}-{int(day):02d}{rest}"
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(raw), time())
        except ValueError:
            return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz)


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if key in record and record[key] is not None:
            return key, record[key]
    return None, None


def parse_recall(text: str, *, tz: tzinfo, max_chars: int) -> Parsed[RecallItem]:
    """The runs of a ``recall_log.jsonl``: one object per line (see the module docstring)."""
    parsed: Parsed[RecallItem] = Parsed()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            parsed.unreadable.append(Unreadable(number, NOT_JSON))
            continue
        if not isinstance(record, dict):
            parsed.unreadable.append(Unreadable(number, NOT_OBJECT))
            continue
        time_key, stamp = _first(record, RECALL_TIME_KEYS)
        at = parse_timestamp(stamp, tz=tz) if time_key else None
        if at is None:
            parsed.unreadable.append(Unreadable(number, NO_TIMESTAMP))
            continue
        _, user = _first(record, RECALL_INPUT_KEYS)
        _, answer = _first(record, RECALL_OUTPUT_KEYS)
        if not isinstance(user, str) or not user.strip():
            parsed.unreadable.append(Unreadable(number, NO_INPUT))
            continue
        if answer is not None and not isinstance(answer, str):
            parsed.unreadable.append(Unreadable(number, OUTPUT_NOT_TEXT))
            continue
        if len(user) > max_chars or len(answer or "") > 5 * max_chars:
            parsed.unreadable.append(Unreadable(number, TOO_LONG))
            continue
        parsed.items.append(RecallItem(number, at, user.strip(), (answer or "").strip()))
    return parsed
