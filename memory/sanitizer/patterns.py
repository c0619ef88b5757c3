"""Regex building blocks shared by the marker and override rules.

Every pattern runs on the detection view (:mod:`memory.textview`, lower-cased, look-alike
letters folded), so it is written in lower case and in the view's forms: NFKC folds
［］＜＞（）｛｝ to ``[]<>(){}``, ，；！？： to ``,;!?:``; the dashes ‐–—― become ``-``.

Every pattern starts with a literal or a character class (so the regex engine scans for
it in C) and has bounded or run-anchored repetitions, which keeps the cost linear.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from memory.textview import fold

# Quotation marks are not brackets: “…” is what the marker rules leave behind.
_QUOTATION_MARKS: Final = "‘’‚‛“”„‟〝〞〟"


def _brackets(*categories: str) -> str:
    """Every character of these Unicode categories as the view shows it, but quotes.

    All of them are in the Basic Multilingual Plane (a test checks that).
    """
    found = {
        fold(chr(code), fold_case=False)
        for code in range(0x10000)
        if unicodedata.category(chr(code)) in categories
    }
    return "".join(sorted(ch for ch in found if len(ch) == 1 and ch not in _QUOTATION_MARKS))


# Brackets as they appear in the view: every opening and initial punctuation of Unicode
# ([【〔〖⟦《〈‹«「『⟨⌈⦑ …, full-width and small forms fold to these) and "<"; every closing
# and final one and ">". "(", "{" and "⦃" open code as often as markers.
OPEN_CODE_CHARS: Final = "({⦃"
OPEN_STRICT_CHARS: Final = (
    "".join(ch for ch in _brackets("Ps", "Pi") if ch not in OPEN_CODE_CHARS) + "<"
)
CLOSE_CHARS: Final = _brackets("Pe", "Pf") + ">"
ANGLE_OPEN_CHARS: Final = "‹«《〈⟨❬❮❰<"
ANGLE_CLOSE_CHARS: Final = ">›»》〉⟩❭❯❱"

# "<" glued to an ASCII identifier before an ASCII word (List<User>) and "(" / "{" glued
# to an identifier or quote (print(sys), f"{system}", 软件系统（系统软件）) are code or
# prose, not markers; "INS<用户>" and "INS</assistant>" are markers. The lookarounds sit
# right after the bracket so that every pattern still starts with a plain character class.
_NOT_GENERIC: Final = r"(?:(?<![a-z0-9_]<)|(?=[^\x00-\x7f]|\s{0,8}/))"
NOT_CODE: Final = rf"{_NOT_GENERIC}(?<![\w.$'\"`][({{⦃])"
OPEN: Final = f"[{re.escape(OPEN_STRICT_CHARS + OPEN_CODE_CHARS)}]{NOT_CODE}"
OPEN_STRICT: Final = f"[{re.escape(OPEN_STRICT_CHARS)}]{_NOT_GENERIC}"
OPEN_MORE: Final = f"[{re.escape(OPEN_STRICT_CHARS + OPEN_CODE_CHARS)}]{{0,2}}"
CLOSE: Final = f"[{re.escape(CLOSE_CHARS)}]"
NOT_CLOSE: Final = f"[^{re.escape(CLOSE_CHARS)}\n]"

# Separators tolerated between the letters of a keyword: "[S y s t e m]", "[S.Y.S]",
# combining marks laid over letters.
LETTER_SEP: Final = r"[\s._\-·*\u0300-\u036f]{0,3}"
CJK_SEP: Final = r"[ \t]{0,3}"
WS: Final = r"[ \t]{0,3}"
SP: Final = r"\s{0,8}"

# The quotation the marker rules leave behind (“…”, innermost, on one line). Text inside
# one is being mentioned, not used; no rule matches its quotation marks.
QUOTE_OPEN: Final = "“"
QUOTE_CLOSE: Final = "”"
QUOTED_RE: Final = re.compile(r"“[^“”\n]*”")


def spaced(word: str) -> str:
    """A regex for ``word`` that tolerates separators between its characters."""
    sep = LETTER_SEP if word.isascii() else CJK_SEP
    tokens = [sep.join(re.escape(ch) for ch in token) for token in word.split(" ")]
    return LETTER_SEP.join(tokens)


def alt(words: tuple[str, ...]) -> str:
    """Alternation of spaced words, longest first so the longest form wins.

    A lookahead on the first characters rejects most positions before the alternation
    is tried word by word.
    """
    firsts = re.escape("".join(sorted({w[0] for w in words})))
    alternation = "|".join(spaced(w) for w in sorted(words, key=len, reverse=True))
    return f"(?=[{firsts}])(?:{alternation})"


def tail(end: str) -> str:
    """The rest of a clause: anything but a terminator."""
    return f"[^{re.escape(end)}]*"


def lead(*alternatives: tuple[str, str]) -> str:
    """Alternatives (literal head, regex tail) behind one leading character class.

    The regex engine scans fast only for a pattern whose first element is a plain
    literal or character class, so the first character of every head is consumed by
    one class and each alternative re-checks it with a one-character lookbehind. Heads
    sharing a tail share one copy of it (order of first appearance is kept).
    """
    firsts = "".join(sorted({head[0] for head, _ in alternatives}))
    by_tail: dict[str, list[str]] = {}
    for head, rest in alternatives:
        by_tail.setdefault(rest, []).append(f"(?<={re.escape(head[0])}){re.escape(head[1:])}")
    branches = [f"(?:{'|'.join(heads)}){rest}" for rest, heads in by_tail.items()]
    return f"[{re.escape(firsts)}](?:{'|'.join(branches)})"


def words(heads: tuple[str, ...], rest: str) -> tuple[tuple[str, str], ...]:
    """The same tail after each word, longest word first."""
    return tuple((word, rest) for word in sorted(heads, key=len, reverse=True))


def literal_heads(*alternatives: tuple[str, str]) -> tuple[re.Pattern[str], ...]:
    """One pattern per distinct literal head, for words made of common letters.

    A literal prefix is the fastest scan the regex engine has; a character class of
    common Latin letters would stop at almost every position. Each head must start a
    word: no letter or digit may precede it.
    """
    tails: dict[str, list[str]] = {}
    for head, rest in alternatives:
        tails.setdefault(head, []).append(rest)
    return tuple(
        re.compile(f"{re.escape(head)}(?<![a-z0-9_]{re.escape(head)})(?:{'|'.join(group)})")
        for head, group in tails.items()
    )
