"""Injection sanitiser for history text (design v2 §2.2, SEC-02; issues #10 and #17).

Every history text (past user inputs, assistant outputs, rolling summaries, recalled
runs, confirmed facts) is attacker-controllable. Before it is wrapped in the untrusted
boundary of :mod:`memory.boundary` it passes :func:`sanitize_history`, which

1. drops invisible characters (zero-width, soft hyphen, bidi controls, Unicode tags and
   the rest of :mod:`memory.textview`'s list; emoji keep their joiners, ``❤️`` stays) and
   unifies line endings;
2. matches its rules on the shared text view (:mod:`memory.textview`: NFKC per
   character, lower-cased, look-alike letters folded, so ［ＳＹＳＴＥＭ］, Cyrillic
   [Ѕуѕtеm] and [System] split by a zero-width space all read ``[system]``) and maps
   every hit back to the text as written;
3. **defangs** whatever imitates our structure (:mod:`memory.sanitizer.markers`): a
   forged boundary header or footer, a turn marker, a role or priority marker, a
   chat-template token, a role label at the start of a line. The syntax goes and the
   words stay, in quotation marks: ``[System] 你好`` → ``“System” 你好``,
   ``<|im_start|>`` → ``“im_start”``, ``[本会话前情结束 — …]`` → ``“本会话前情结束 — …”``.
   No word is ever deleted, and ordinary text (【注意】, INSTRUCTIONS, 忽略标点错误) is
   returned exactly as written;
4. **flags** instruction-override phrases (「忽略以上所有指令」, "ignore previous
   instructions"; :mod:`memory.sanitizer.override_zh`, :mod:`memory.sanitizer.override_en`)
   without changing them: the same words are how teachers correct an earlier setting
   (「前面说的都不算了，我这学期改教初一」), and that correction is the fact memory must
   keep. The boundary and the low-privilege placement of history are the protection
   against the instruction; the sanitiser only guarantees it cannot forge the structure.

The marker rules run repeatedly until the text no longer changes, so the result is a
fixed point: ``sanitize_history(sanitize_history(x)) == sanitize_history(x)``, and it
never contains a boundary line, a turn marker or a template token in a form a model
would read as structure.
"""

from __future__ import annotations

from typing import Final

from memory.sanitizer import markers, override_en, override_zh
from memory.sanitizer.engine import (
    RULE_INVISIBLE,
    SanitizeResult,
    sanitize_history,
    sanitize_history_report,
)

# Rule names by kind: markers change the text, overrides are only flagged.
MARKER_RULES: Final[frozenset[str]] = frozenset(rule.name for rule in markers.RULES)
OVERRIDE_RULES: Final[frozenset[str]] = frozenset(
    name for name, _ in (*override_zh.RULES, *override_en.RULES)
)

__all__ = [
    "MARKER_RULES",
    "OVERRIDE_RULES",
    "RULE_INVISIBLE",
    "SanitizeResult",
    "sanitize_history",
    "sanitize_history_report",
]
