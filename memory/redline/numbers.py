"""Number recognisers: resident ID, mobile number, bank card.

* ``id_number`` — 18-character resident ID (GB 11643-1999: region, real birth date,
  ISO 7064 MOD 11-2 check character), the student registration number ``G`` + ID, and
  the 15-digit legacy ID when an ID context word starts within reach before or after it.
* ``mobile`` — mainland mobile numbers, with or without a ``+86``/``86``/``0086`` prefix,
  plain or grouped 3-4-4 / 3-8, the prefix glued to the first group or not.
* ``bank_card`` — 16–19 digits that pass the Luhn check.

Digits are matched as whole runs: a number that is part of a longer digit run is never
one of these items. The three categories share one tokenisation of the digit runs
(cached on the document), matched in priority order so that a valid 18-digit ID is
never also reported as a card.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from memory.redline.base import Candidate, Category, Doc, Finding

# Digit groups joined by one or two spaces or a hyphen; the check character X may end
# the run. A chunk is maximal, so a token is always a whole digit run.
_SEP: Final = r"(?:[ \t]{1,2}|[ \t]?-[ \t]?)"
_CHUNK_RE: Final = re.compile(rf"[0-9]+(?:{_SEP}[0-9]+)*(?:{_SEP}?[Xx](?![0-9A-Za-z]))?")
_TOKEN_RE: Final = re.compile(r"[0-9]+[Xx]?|[Xx]")

_ID_WEIGHTS: Final = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK: Final = "10X98765432"
_ID_CONTEXT_RE: Final = re.compile(
    r"身份证|证件|身份号|公民身份|学籍号|证号|(?<![A-Za-z])(?:ID|Id|id)(?![A-Za-z])"
)
_MOBILE_RE: Final = re.compile(r"1[3-9][0-9]{9}")
# A context word must *start* within this many characters of the number (before it, it
# must lie wholly inside; after it, only its first character must).
_CONTEXT_REACH: Final = 12
_CONTEXT_WORD_MAX: Final = 4
# In the same sentence a context word counts up to this far (sentence ends: 。!?; and line
# breaks, as in memory.redline.base; a full stop between digits is a decimal point).
_SENTENCE_REACH: Final = 40
_SENTENCE_END_RE: Final = re.compile(r"[。!?;\n\r]|\.(?:(?<![0-9]\.)|(?![0-9]))")
# A label right before the number that says it is something else; then a context word
# must follow at once (within _ATTACHED characters) to count.
_LABEL_REACH: Final = 8
_ATTACHED: Final = 2
_OTHER_LABEL_RE: Final = re.compile(
    r"(?:(?:订单|运单|快递单?|物流单?|流水|交易|编|工|考|学|账|帐|卡|票|批次|序列|发票|会员|客户|合同"
    r"|商品|工单|报名|登记|档案|房间?|车牌|型|货)号码?|QQ|qq|微信|手机|电话|座机|订单|运单|快递|流水"
    r"|条形码|条码)\s*(?:是|为|:)?\s*$"
)
# +86 followed by a grouped mobile, with separators the digit chunks do not accept:
# +86(138)1234 5678, +86.138.1234.5678, +86138 1234 5678.
_PLUS86_RE: Final = re.compile(
    r"\+\s?(?:00)?86\s?[-.(]?\s?(1[3-9][0-9])\s?[-.)]?\s?([0-9]{4})\s?[-.]?\s?([0-9]{4})(?![0-9])"
)


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    digits: str


# Tries a match starting at token i; returns the index of its last token.
_Matcher = Callable[[str, Sequence[_Token], int], int | None]


def id_check_char(body17: str) -> str:
    """The GB 11643-1999 check character (ISO 7064 MOD 11-2) of the first 17 digits."""
    total = sum(int(d) * w for d, w in zip(body17, _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11]


def _valid_date(year: int, month: int, day: int) -> bool:
    if not 1900 <= year <= _dt.date.today().year:
        return False
    try:
        _dt.date(year, month, day)
    except ValueError:
        return False
    return True


def valid_id18(value: str) -> bool:
    if len(value) != 18 or not value[:17].isdigit() or value[0] not in "12345678":
        return False
    if not _valid_date(int(value[6:10]), int(value[10:12]), int(value[12:14])):
        return False
    return id_check_char(value[:17]) == value[17].upper()


def valid_id15(value: str) -> bool:
    if len(value) != 15 or not value.isdigit() or value[0] not in "12345678":
        return False
    return _valid_date(1900 + int(value[6:8]), int(value[8:10]), int(value[10:12]))


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _joined(tokens: Sequence[_Token], i: int, length: int) -> tuple[int, str] | None:
    """Whole tokens from i whose digits add up to exactly ``length`` characters."""
    value = ""
    for j in range(i, len(tokens)):
        value += tokens[j].digits
        if len(value) >= length:
            return (j, value) if len(value) == length else None
    return None


def _id18_at(_norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    found = _joined(tokens, i, 18)
    return found[0] if found and valid_id18(found[1]) else None


def id_context_near(norm: str, start: int, end: int) -> bool:
    """Whether an ID context word is about the 15-digit number at [start, end).

    * A context word ending within reach before the number: yes (``身份证号：…``).
    * The number labelled as something else right before it (订单号, 学号, 电话 …): only a
      context word starting right after it counts (``学号…（即身份证号）``).
    * A context word starting within reach after the number, or anywhere in the same
      sentence up to :data:`_SENTENCE_REACH` characters away: yes — people add the word
      as an afterthought (``110101530902366——请核对，家长提供的是身份证号``).
    """
    if _ID_CONTEXT_RE.search(norm, max(0, start - _CONTEXT_REACH), start):
        return True
    after = _ID_CONTEXT_RE.search(norm, end, end + _SENTENCE_REACH + _CONTEXT_WORD_MAX)
    if _OTHER_LABEL_RE.search(norm, max(0, start - _LABEL_REACH), start):
        return after is not None and after.start() <= end + _ATTACHED
    if after is not None and after.start() <= end + _CONTEXT_REACH:
        return True
    lo = max(0, start - _SENTENCE_REACH - _CONTEXT_WORD_MAX)
    for delim in _SENTENCE_END_RE.finditer(norm, lo, start):
        lo = delim.end()
    if any(m.end() >= start - _SENTENCE_REACH for m in _ID_CONTEXT_RE.finditer(norm, lo, start)):
        return True
    if after is None or after.start() > end + _SENTENCE_REACH:
        return False
    return _SENTENCE_END_RE.search(norm, end, after.start()) is None


def _id15_at(norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    found = _joined(tokens, i, 15)
    if not found or not valid_id15(found[1]):
        return None
    return found[0] if id_context_near(norm, tokens[i].start, tokens[found[0]].end) else None


def _card_at(_norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    first = tokens[i].digits
    if not first.isdigit():
        return None
    if 16 <= len(first) <= 19:
        return i if luhn(first) else None
    lengths = [len(t.digits) for t in tokens[i : i + 5]]
    candidates: list[int] = []  # last token index, longest first
    if lengths[:4] == [4, 4, 4, 4]:
        if len(lengths) == 5 and 1 <= lengths[4] <= 3:
            candidates.append(i + 4)
        candidates.append(i + 3)
    elif len(lengths) >= 2 and lengths[0] == 6 and 10 <= lengths[1] <= 13:
        candidates.append(i + 1)
    for j in candidates:
        value = "".join(t.digits for t in tokens[i : j + 1])
        if value.isdigit() and luhn(value):
            return j
    return None


def _mobile_body(groups: Sequence[str]) -> int | None:
    """How many of ``groups`` (digit runs) make 11 mobile digits: plain, 3-4-4, 3-8 or 7-4."""
    lengths = [len(g) for g in groups[:3]]
    if not lengths:
        return None
    if lengths[0] == 11:
        used = 1
    elif lengths[:3] == [3, 4, 4]:
        used = 3
    elif lengths[:2] in ([3, 8], [7, 4]):
        used = 2
    else:
        return None
    return used if _MOBILE_RE.fullmatch("".join(groups[:used])) else None


def _mobile_at(_norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    first = tokens[i].digits
    for prefix in ("0086", "86"):
        if first == prefix:
            used = _mobile_body([t.digits for t in tokens[i + 1 : i + 4]])
            if used is not None:
                return i + used
        elif first.startswith(prefix) and len(first) - len(prefix) in (3, 7, 11):
            # The prefix glued to the first group: 86138 1234 5678, 8613812345678.
            glued = [first[len(prefix) :], *(t.digits for t in tokens[i + 1 : i + 3])]
            used = _mobile_body(glued)
            if used is not None:
                return i + used - 1
    used = _mobile_body([t.digits for t in tokens[i : i + 3]])
    return None if used is None else i + used - 1


# Order is priority: an 18-digit run that is a valid ID is never reported as a card.
_DIGIT_MATCHERS: Final[tuple[tuple[Category, _Matcher], ...]] = (
    (Category.ID_NUMBER, _id18_at),
    (Category.BANK_CARD, _card_at),
    (Category.MOBILE, _mobile_at),
    (Category.ID_NUMBER, _id15_at),
)

_DigitSpan = tuple[Category, int, int, str]


# Every item has at least 11 digits in a stretch of digits, spaces and hyphens (or a +86
# prefix, whose separators the chunks do not take): text without either has no number
# items, which one scan tells.
_LONG_RUN_RE: Final = re.compile(r"[0-9][0-9 \t-]{10,}")


def digit_spans(norm: str) -> list[_DigitSpan]:
    """Every number item of ``norm``: (category, start, end, kind)."""
    spans: list[_DigitSpan] = []
    has_run = _LONG_RUN_RE.search(norm) is not None
    if not has_run and "+" not in norm:
        return spans
    for chunk in _CHUNK_RE.finditer(norm) if has_run else ():
        text = chunk.group()
        # (a chunk shorter than 11 characters cannot hold 11 digits: most are "45分")
        if len(text) < 11 or sum(c.isdigit() for c in text) < 11:
            continue
        base = chunk.start()
        tokens = [
            _Token(base + m.start(), base + m.end(), m.group()) for m in _TOKEN_RE.finditer(text)
        ]
        used = [False] * len(tokens)
        for category, matcher in _DIGIT_MATCHERS:
            i = 0
            while i < len(tokens):
                last = None if used[i] else matcher(norm, tokens, i)
                if last is None or any(used[i : last + 1]):
                    i += 1
                    continue
                for k in range(i, last + 1):
                    used[k] = True
                start, end = tokens[i].start, tokens[last].end
                kind = matcher.__name__.strip("_").removesuffix("_at")
                if category is Category.ID_NUMBER and start > 0 and norm[start - 1] in "Gg":
                    start -= 1  # student registration number: G + resident ID
                    kind = "registration"
                elif category is Category.MOBILE and start > 0 and norm[start - 1] == "+":
                    start -= 1  # +86 prefix
                spans.append((category, start, end, kind))
                i = last + 1
    taken = [(s, e) for c, s, e, _ in spans if c is Category.MOBILE]
    for m in _PLUS86_RE.finditer(norm):
        if not any(s < m.end() and m.start() < e for s, e in taken):
            spans.append((Category.MOBILE, m.start(), m.end(), "plus86"))
    return spans


_REASONS: Final[dict[str, str]] = {
    "id18": "18-character ID: region, birth date and check character valid",
    "registration": "G + resident ID: a student registration number",
    "id15": "15-digit legacy ID with a valid birth date and an ID word near it",
    "card": "16-19 digits passing the Luhn check",
    "mobile": "11 digits with a mainland mobile prefix",
    "plus86": "+86 followed by a grouped mainland mobile number",
}


class _NumberRecogniser:
    """The shared digit tokenisation, filtered to one category."""

    category: Category

    def find(self, doc: Doc) -> list[Candidate]:
        return [
            Candidate(start, end, kind)
            for category, start, end, kind in doc.digits(digit_spans)
            if category is self.category
        ]

    def validate(self, doc: Doc, candidate: Candidate) -> bool:
        # Checksums, dates and prefixes were checked while matching the digit run.
        return True

    def score(self, doc: Doc, candidate: Candidate) -> Finding:
        return Finding(
            self.category,
            candidate.start,
            candidate.end,
            1.0,
            (_REASONS.get(candidate.kind, candidate.kind),),
            doc.text[candidate.start : candidate.end],
        )


class IdNumberRecogniser(_NumberRecogniser):
    category = Category.ID_NUMBER


class MobileRecogniser(_NumberRecogniser):
    category = Category.MOBILE


class BankCardRecogniser(_NumberRecogniser):
    category = Category.BANK_CARD
