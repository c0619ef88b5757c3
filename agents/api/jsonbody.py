"""JSON that can be stored and rendered back: the one owner of what the API accepts as JSON.

Three failures of a request body used to end in a 500 after a run was already stored:
nesting deep enough to exhaust the parser's recursion, text that is not Unicode (a lone
surrogate escape such as ``"\\ud800"``, which no UTF-8 encoder can write back) and text
PostgreSQL refuses (NUL). Here, once, for every JSON body and every JSON-valued field:

- :func:`loads` parses bytes with bounded depth (the stdlib parser, whose recursion error
  becomes a refusal) and refuses NaN/Infinity literals;
- :func:`find_unsafe` walks a parsed value without recursion and names the first place
  that could not be stored or rendered: a string or key with NUL or a lone surrogate, a
  number that is not finite (``1e400`` parses as infinity), a container nested deeper
  than allowed, or (for values built in Python) something that is not JSON at all.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

# Containers inside containers. A request body of this API is an object of fields, some
# of which hold small JSON values; 32 levels is far beyond any of them.
MAX_DEPTH = 32

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SHOWN_KEY_CHARS = 40

Path = tuple[str | int, ...]


class BodyRejected(ValueError):
    """The bytes are not a JSON text this API accepts; the message says why (no field)."""


@dataclass(frozen=True, slots=True)
class Unsafe:
    """Where a value cannot be stored or rendered, and why (a sentence for the client)."""

    path: Path
    message: str

    @property
    def where(self) -> str:
        """The path as a client writes it: ``context.notes[2]``."""
        return format_path(self.path)


def shown_key(key: str) -> str:
    """A key as an error message may echo it (long keys are cut)."""
    return key if len(key) <= _SHOWN_KEY_CHARS else key[:_SHOWN_KEY_CHARS] + "…"


def format_path(path: Path) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{shown_key(part)}" if text else shown_key(part)
    return text


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored and rendered back, or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return _("不能包含空字符（U+0000）。")
    return _("含有无效的 Unicode 字符（单独的代理项 U+%(code)04X）。") % {
        "code": ord(found.group())
    }


def find_unsafe(value: Any, *, max_depth: int = MAX_DEPTH) -> Unsafe | None:
    """The first place (in document order) where ``value`` is not storable JSON, or None.

    Depth counts containers: ``{}`` is 1, ``{"a": []}`` is 2. Iterative, so a value of
    any depth is walked without recursion.
    """
    stack: list[tuple[Any, Path, int]] = [(value, (), 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict):
            if depth + 1 > max_depth:
                return Unsafe(path, _("嵌套过深：最多 %(n)d 层。") % {"n": max_depth})
            children: list[tuple[Any, Path, int]] = []
            for key, child in item.items():
                if not isinstance(key, str):
                    return Unsafe(path, _("对象的键必须是字符串。"))
                problem = text_problem(key)
                if problem is not None:
                    # The path stops at the object: the bad key is never echoed back.
                    return Unsafe(path, _("键名%(problem)s") % {"problem": problem})
                children.append((child, (*path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            if depth + 1 > max_depth:
                return Unsafe(path, _("嵌套过深：最多 %(n)d 层。") % {"n": max_depth})
            stack.extend(
                (child, (*path, i), depth + 1) for i, child in reversed(list(enumerate(item)))
            )
        elif isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return Unsafe(path, problem)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return Unsafe(path, _("数字超出范围。"))
        elif item is None or isinstance(item, bool | int):
            continue
        else:
            return Unsafe(path, _("不是 JSON 值。"))
    return None


def _refuse_constant(name: str) -> None:
    raise BodyRejected(_("请求体不是有效的 JSON：不支持 %(name)s。") % {"name": name})


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON text; raises :class:`BodyRejected` for syntax, depth or huge numbers.

    The text content (NUL, surrogates, infinities) is :func:`find_unsafe`'s to judge, so
    that its refusal can name the field.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except BodyRejected:
        raise
    except json.JSONDecodeError as exc:
        raise BodyRejected(
            _("请求体不是有效的 JSON（第 %(line)d 行第 %(column)d 列）。")
            % {"line": exc.lineno, "column": exc.colno}
        ) from exc
    except RecursionError as exc:
        # The C scanner counts its own recursion and raises cleanly: far too deep.
        raise BodyRejected(_("JSON 嵌套过深：最多 %(n)d 层。") % {"n": max_depth}) from exc
    except ValueError as exc:
        # An integer longer than Python converts (sys.get_int_max_str_digits).
        raise BodyRejected(_("请求体中的数字过长。")) from exc
    if _too_deep(value, max_depth=max_depth):
        raise BodyRejected(_("JSON 嵌套过深：最多 %(n)d 层。") % {"n": max_depth})
    return value


def _too_deep(value: Any, *, max_depth: int) -> bool:
    """Depth only (text problems are reported per field by the caller)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth + 1 > max_depth:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False
