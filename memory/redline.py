"""Red-line filter: personal data that memory must never keep (design v2 §4, DESIGN "Red lines").

A pure, deterministic filter. It runs on every candidate fact (any hit means the
candidate is never saved), replaces spans in every rolling summary before it is saved,
and re-checks facts and summaries when they are injected. The LLM prompts forbid the
same things; this filter is what we rely on when a prompt fails.

Categories:

* ``id_number`` — 18-character resident ID (GB 11643-1999: region, real birth date,
  ISO 7064 MOD 11-2 check character), the student registration number ``G`` + ID, and
  the 15-digit legacy ID when an ID context word is near.
* ``mobile`` — mainland mobile numbers, with or without a ``+86``/``86``/``0086`` prefix.
* ``bank_card`` — 16–19 digits that pass the Luhn check.
* ``grade`` — a student's score, rank or transcript: a score/rank next to a subject or
  exam word, attributed to a person or stated with a result verb (考了, 成绩是 …).
* ``health`` — a condition from a lexicon attributed to a person (the teacher too) or
  stated with a diagnosis verb; literary and teaching-topic uses pass.

Matching runs on a normalised copy of the text (NFKC, invisible and bidi characters
removed, dash variants unified) and keeps a map back to the original offsets, so
:func:`redact` replaces spans of the original text. Digits are matched as whole runs:
a number that is part of a longer digit run is never one of these items. Grade and
health hits cover the whole clause around the trigger, so the number or the condition
does not survive next to the name.

:func:`redact` repeats the scan until nothing matches, so its output is clean and
``redact(redact(x).text) == redact(x).text``. Placeholders are masked before matching and
never match any rule, even when a user types one.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = [
    "PLACEHOLDERS",
    "Category",
    "Hit",
    "Redaction",
    "is_clean",
    "redact",
    "scan",
]


class Category(StrEnum):
    """What a hit is; the values are what audit logs store."""

    ID_NUMBER = "id_number"
    MOBILE = "mobile"
    BANK_CARD = "bank_card"
    GRADE = "grade"
    HEALTH = "health"


PLACEHOLDERS: Final[dict[Category, str]] = {
    Category.ID_NUMBER: "(涉及身份证号，略)",
    Category.MOBILE: "(涉及手机号，略)",
    Category.BANK_CARD: "(涉及银行卡号，略)",
    Category.GRADE: "(涉及学生成绩，略)",
    Category.HEALTH: "(涉及健康信息，略)",
}

# Tie-break when two hits cover exactly the same span.
_PRIORITY: Final[dict[Category, int]] = {c: i for i, c in enumerate(Category)}


@dataclass(frozen=True, slots=True)
class Hit:
    """One blocked span, as offsets into the original (un-normalised) input."""

    category: Category
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    """The redacted text and how many spans of each category were replaced.

    ``counts`` only holds categories with at least one replaced span. A span swallowed by
    a larger one (an ID inside a redacted grade clause) is not counted separately.
    """

    text: str
    counts: dict[Category, int]


def scan(text: str) -> list[Hit]:
    """Every red-line span of ``text``, sorted and non-overlapping, in original offsets."""
    norm, origin = _normalise(text)
    norm = _mask_placeholders(norm)
    spans = _digit_spans(norm) + _text_spans(norm)
    hits: list[Hit] = []
    for category, start, end in _resolve(spans):
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        hits.append(Hit(category, start, end))
    return hits


def redact(text: str) -> Redaction:
    """Replace every hit by its placeholder, repeating until the text is clean.

    Replacing a long span by a shorter placeholder can bring two words within reach of
    each other, so a single pass is not always a fixed point; each pass replaces at
    least one character that is not a placeholder, so the loop ends.
    """
    counts: Counter[Category] = Counter()
    while True:
        hits = scan(text)
        if not hits:
            return Redaction(text=text, counts=dict(counts))
        parts: list[str] = []
        pos = 0
        for hit in hits:
            parts.append(text[pos : hit.start])
            parts.append(PLACEHOLDERS[hit.category])
            pos = hit.end
        parts.append(text[pos:])
        text = "".join(parts)
        counts.update(hit.category for hit in hits)


def is_clean(text: str) -> bool:
    """True when ``text`` holds nothing on the red line."""
    return not scan(text)


# --------------------------------------------------------------------------------------
# Normalisation with an offset map
# --------------------------------------------------------------------------------------

# ASCII, CJK unified ideographs and the common CJK brackets/quotes are NFKC-stable and
# visible (a test checks this), so text made only of them is used as is. Anything else
# goes through the per-character path.
_SPECIAL_RE: Final = re.compile(
    "[^\x00-\x7f\u4e00-\u9fff\u3001\u3002\u3008-\u3011\u2018\u2019\u201c\u201d]"
)
# Zero-width, soft hyphen, bidi controls, word joiners, variation selectors, fillers.
_INVISIBLE_RE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# Dash variants that NFKC leaves alone but people use between digit groups.
_DASHES: Final = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58")
_LINE_BREAKS: Final = frozenset("\u0085\u2028\u2029")
_CHAR_CACHE: dict[str, str] = {}


def _normalise_char(ch: str) -> str:
    cached = _CHAR_CACHE.get(ch)
    if cached is not None:
        return cached
    if _INVISIBLE_RE.match(ch) or unicodedata.category(ch) == "Cf":
        out = ""
    elif ch in _DASHES:
        out = "-"
    elif ch in _LINE_BREAKS:
        out = "\n"
    else:
        out = "".join(c for c in unicodedata.normalize("NFKC", ch) if not _INVISIBLE_RE.match(c))
    if len(_CHAR_CACHE) < 65536:
        _CHAR_CACHE[ch] = out
    return out


def _normalise(text: str) -> tuple[str, list[int] | None]:
    """The normalised text and, unless it is the identity, the original index of each char."""
    specials = [m.start() for m in _SPECIAL_RE.finditer(text)]
    if not specials:
        return text, None
    parts: list[str] = []
    origin: list[int] = []
    pos = 0
    for i in specials:
        if i > pos:
            parts.append(text[pos:i])
            origin.extend(range(pos, i))
        rep = _normalise_char(text[i])
        if rep:
            parts.append(rep)
            origin.extend([i] * len(rep))
        pos = i + 1
    if pos < len(text):
        parts.append(text[pos:])
        origin.extend(range(pos, len(text)))
    return "".join(parts), origin


# Placeholders as they look after normalisation (the full-width comma became ",").
_PLACEHOLDER_RE: Final = re.compile(r"\(涉及(?:身份证号|手机号|银行卡号|学生成绩|健康信息),略\)")
# A visible-nothing character no rule matches: not a digit, letter, CJK or delimiter.
_MASK: Final = "\ue000"


def _mask_placeholders(norm: str) -> str:
    if "涉及" not in norm:
        return norm
    return _PLACEHOLDER_RE.sub(lambda m: _MASK * len(m.group()), norm)


# --------------------------------------------------------------------------------------
# Digit items: resident ID, mobile, bank card
# --------------------------------------------------------------------------------------

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
_CONTEXT_REACH: Final = 12


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    digits: str


_Span = tuple[Category, int, int]
# Tries a match starting at token i; returns the index of its last token.
_Matcher = Callable[[str, Sequence[_Token], int], int | None]


def _id_check_char(body17: str) -> str:
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


def _valid_id18(value: str) -> bool:
    if len(value) != 18 or not value[:17].isdigit() or value[0] not in "12345678":
        return False
    if not _valid_date(int(value[6:10]), int(value[10:12]), int(value[12:14])):
        return False
    return _id_check_char(value[:17]) == value[17].upper()


def _valid_id15(value: str) -> bool:
    if len(value) != 15 or not value.isdigit() or value[0] not in "12345678":
        return False
    return _valid_date(1900 + int(value[6:8]), int(value[8:10]), int(value[10:12]))


def _luhn(digits: str) -> bool:
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
    return found[0] if found and _valid_id18(found[1]) else None


def _id15_at(norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    found = _joined(tokens, i, 15)
    if not found or not _valid_id15(found[1]):
        return None
    start, end = tokens[i].start, tokens[found[0]].end
    if _ID_CONTEXT_RE.search(norm, max(0, start - _CONTEXT_REACH), start) or _ID_CONTEXT_RE.search(
        norm, end, end + _CONTEXT_REACH
    ):
        return found[0]
    return None


def _card_at(_norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    first = tokens[i].digits
    if not first.isdigit():
        return None
    if 16 <= len(first) <= 19:
        return i if _luhn(first) else None
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
        if value.isdigit() and _luhn(value):
            return j
    return None


def _mobile_body(tokens: Sequence[_Token], i: int) -> int | None:
    """11 mobile digits from token i: plain, 3-4-4 or 3-8."""
    if i >= len(tokens):
        return None
    lengths = [len(t.digits) for t in tokens[i : i + 3]]
    if lengths[0] == 11:
        last = i
    elif lengths == [3, 4, 4]:
        last = i + 2
    elif lengths[:2] == [3, 8]:
        last = i + 1
    else:
        return None
    value = "".join(t.digits for t in tokens[i : last + 1])
    return last if _MOBILE_RE.fullmatch(value) else None


def _mobile_at(_norm: str, tokens: Sequence[_Token], i: int) -> int | None:
    first = tokens[i].digits
    for prefix in ("0086", "86"):
        if len(first) == len(prefix) + 11 and first.startswith(prefix):
            return i if _MOBILE_RE.fullmatch(first[len(prefix) :]) else None
    if first in ("86", "0086"):
        last = _mobile_body(tokens, i + 1)
        if last is not None:
            return last
    return _mobile_body(tokens, i)


# Order is priority: an 18-digit run that is a valid ID is never reported as a card.
_DIGIT_MATCHERS: Final[tuple[tuple[Category, _Matcher], ...]] = (
    (Category.ID_NUMBER, _id18_at),
    (Category.BANK_CARD, _card_at),
    (Category.MOBILE, _mobile_at),
    (Category.ID_NUMBER, _id15_at),
)


def _digit_spans(norm: str) -> list[_Span]:
    spans: list[_Span] = []
    for chunk in _CHUNK_RE.finditer(norm):
        text = chunk.group()
        if sum(c.isdigit() for c in text) < 11:
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
                if category is Category.ID_NUMBER and start > 0 and norm[start - 1] in "Gg":
                    start -= 1  # student registration number: G + resident ID
                elif category is Category.MOBILE and start > 0 and norm[start - 1] == "+":
                    start -= 1  # +86 prefix
                spans.append((category, start, end))
                i = last + 1
    return spans


# --------------------------------------------------------------------------------------
# Sentences and clauses
# --------------------------------------------------------------------------------------

# A full stop between two digits is a decimal point; a comma or colon between digits is
# a thousands separator or a time. (Every branch starts with a character, never with a
# lookbehind, so that the regex engine can skip ahead quickly; the same holds below.)
_SENTENCE_DELIM_RE: Final = re.compile(r"[。!?;\n\r]|\.(?:(?<![0-9]\.)|(?![0-9]))")
_CLAUSE_DELIM_RE: Final = re.compile(r"[。!?;\n\r、]|[.,:](?:(?<![0-9][.,:])|(?![0-9]))")


def _en(*words: str) -> str:
    """A regex for English words in any case, not inside a longer word."""
    branches = []
    for word in sorted(words, key=len, reverse=True):
        first = f"[{word[0].upper()}{word[0].lower()}]"
        rest = "".join(
            f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word[1:]
        )
        branches.append(f"{first}(?<![A-Za-z]{first}){rest}")
    return f"(?:{'|'.join(branches)})(?![A-Za-z])"


_REACH: Final = 12.0  # "near": this many characters, in the same sentence
# English words are longer than Chinese ones: a Latin letter or space counts a third.
_LATIN_WEIGHT: Final = 0.34


def _weight(ch: str) -> float:
    return _LATIN_WEIGHT if ch == " " or "a" <= ch <= "z" or "A" <= ch <= "Z" else 1.0


def _back(text: str, pos: int, lo: int, reach: float = _REACH) -> int:
    """Start of the window of ``reach`` characters before ``pos``, not before ``lo``."""
    used = 0.0
    while pos > lo and used < reach:
        pos -= 1
        used += _weight(text[pos])
    return pos


def _ahead(text: str, pos: int, hi: int, reach: float = _REACH) -> int:
    """End of the window of ``reach`` characters after ``pos``, not after ``hi``."""
    used = 0.0
    while pos < hi and used < reach:
        used += _weight(text[pos])
        pos += 1
    return pos


class _Doc:
    """Normalised text with lazily computed sentence and clause boundaries."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._sentences: list[int] | None = None
        self._clauses: list[int] | None = None

    def sentence(self, pos: int) -> tuple[int, int]:
        """[start, end) of the sentence holding ``pos`` (delimiters excluded)."""
        if self._sentences is None:
            self._sentences = [m.start() for m in _SENTENCE_DELIM_RE.finditer(self.text)]
        return _bounds(self._sentences, pos, len(self.text))

    def clause_span(self, start: int, end: int) -> tuple[int, int]:
        """The clauses covering [start, end), without surrounding whitespace."""
        if self._clauses is None:
            self._clauses = [m.start() for m in _CLAUSE_DELIM_RE.finditer(self.text)]
        lo, _ = _bounds(self._clauses, start, len(self.text))
        _, hi = _bounds(self._clauses, max(start, end - 1), len(self.text))
        while lo < start and self.text[lo].isspace():
            lo += 1
        while hi > end and self.text[hi - 1].isspace():
            hi -= 1
        return lo, hi

    def only_clause_gap(self, start: int, end: int) -> bool:
        """True when [start, end) holds only clause delimiters and spaces (no sentence end)."""
        gap = self.text[start:end]
        return all(ch.isspace() or ch in ",:、" for ch in gap) and "\n" not in gap


def _bounds(delims: list[int], pos: int, length: int) -> tuple[int, int]:
    """[start, end) between the delimiters around ``pos`` (sorted delimiter offsets)."""
    k = bisect_left(delims, pos)
    if k < len(delims) and delims[k] == pos:
        # pos is itself a delimiter (an item never starts on one); treat it as inside.
        return (delims[k - 1] + 1 if k else 0), (delims[k + 1] if k + 1 < len(delims) else length)
    k = bisect_right(delims, pos)
    lo = delims[k - 1] + 1 if k else 0
    hi = delims[k] if k < len(delims) else length
    return lo, hi


# --------------------------------------------------------------------------------------
# People
# --------------------------------------------------------------------------------------


def _words(spaced: str) -> tuple[str, ...]:
    return tuple(spaced.split())


_SURNAMES: Final = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶"
    "程苏魏吕丁沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾"
    "毛郝龚邵钱严覃武戴莫孔汤温康施牛樊葛邢乔伍庞颜倪庄聂章鲁岳翟殷詹欧耿兰焦俞柳甘祝包"
    "舒阮柯纪梅童凌毕季裴霍涂苗谷盛曲翁冉骆蓝游辛靳管柴蒙鲍喻祁蒲房滕屈饶牟艾尤阳穆农卓"
    "吉缪简项芦麦褚娄窦戚岑景宫费卜冷晏席卫米柏宗瞿桂佟臧闵苟邬卞姬仇栾隋刁沙荣巫寇桑郎"
    "甄丛仲虞敖巩佘池查麻苑迟邝"
)
_COMPOUND_SURNAMES: Final = "欧阳|司马|诸葛|上官|东方|皇甫|司徒|慕容|令狐|夏侯|公孙|尉迟|长孙|宇文"
_NAME_START_RE: Final = re.compile(rf"(?:{_COMPOUND_SURNAMES}|[{_SURNAMES}]|(?P<nick>[小阿]))")
# A name usually starts a word: after a non-CJK character or a particle that introduces
# a person. Elsewhere (这次月考张三数学…) only a strong follower makes it a name.
_NAME_AFTER: Final = frozenset("和与跟给让对把叫被像及、同")
# Characters that are (almost) never part of a given name but often follow a surname
# character inside an ordinary word (高考, 周末, 方程 …).
_NOT_GIVEN: Final = frozenset(
    "的了是在有和与个些种这那我你他她它们上下都也就还要会能说让把被给对向从到及或而但题考"
    "试课卷级年期次时分数师校班节第每本该此其所之为以于可将已很更最太又再才只仅共总满得着"
    "过吗呢吧啊么什怎如何多少几人天月日周末号岁点道篇份张门科河马法面程务然绩单表"
    "测验结组姨中州市省县区镇村"
)
_NAME_STOP: Final = frozenset(
    _words(
        "小学 小题 小组 小时 小测 小考 小节 小结 小说 小数 小孩 小朋 小班 "
        "小升 小初 小一 小二 小三 小四 小五 小六 小字 小心 高一 高二 高三 "
        "高中 高分 高等 高级 高年 初一 初二 初三 周一 周二 周三 周四 周五 "
        "周六 周日 周考 周测 方法 方面 方程 黄河 唐诗 宋词 金额 石头 江河 "
        "毛笔 史上 程序 任何 于是 关于 白天 雷锋 阿姨 孔子 孟子 庄子 江苏 江西 黄冈 "
    )
)

_SUBJECT_NAMES: Final = "语文|数学|英语|物理|化学|生物|历史|地理|政治|科学|作文|体育|音乐|美术"
_STRONG_FOLLOW_RE: Final = re.compile(
    rf"同学|的成绩|的分数|的排名|的名次|的期中|的期末|这次|上次|{_SUBJECT_NAMES}"
)
# What may follow a name; with the start condition this keeps the heuristic narrow.
_NAME_FOLLOW_RE: Final = re.compile(
    r"的|同学|这次|上次|本次|这学期|上学期|本学期|期中|期末|月考|最近|一直|在|考|得|拿|成绩|排名"
    r"|是|有|患|确诊|被|因|总分|语文|数学|英语|物理|化学|生物|历史|地理|政治|科学|作文|今年|去年"
    r"|[,.、:;!?\s0-9]|$"
)

_PRONOUN_RE: Final = re.compile(
    r"(?<![其吉])他|她|(?<![A-Za-z])TA(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Hh]im)(?![A-Za-z])"
)
# "帮我查一下…" is the teacher asking, not owning what follows.
_SELF_RE: Final = re.compile(
    r"(?<![帮给为替让请和跟与])我(?![国校市省区县们班])|(?<![A-Za-z])(?:I|[Mm]y|me)(?![A-Za-z])"
)
_SPECIFIC_RE: Final = re.compile(
    r"儿子|女儿|该生|此生|某生"
    r"|(?:这|那|该|某|有|一)(?:个|位|名)?(?:学生|同学|孩子|男生|女生|小孩|男孩|女孩|小朋友)"
    rf"|[{_SURNAMES}](?:老师|同学|校长|主任|教练|先生|女士)"
)
_GENERIC_RE: Final = re.compile(
    r"学生|同学|孩子|小孩|学员|男生|女生|男孩|女孩|小朋友"
    r"|(?<![A-Za-z])(?:[Ss]tudent|[Kk]id|[Cc]hild|[Ss]on|[Dd]aughter)(?![A-Za-z])"
)
# A generic "student" that is the object of the teacher's action, or a group, is not
# the owner of a grade: 给学生出一套题, 让学生复习, 全体同学.
_GOVERNED_RE: Final = re.compile(
    r"(?:给|为|让|帮|替|教|对|向|带|带领|要求|指导|辅导|请|叫|组织|安排|鼓励|提醒|通知|告诉|督促"
    r"|全体|所有|每个|每位|各位|多数|部分|很多|一些|有些|哪些|适合|面向|针对|初中|高中|小学)$"
)


def _has_name(text: str, pos: int, endpos: int) -> bool:
    """A likely Chinese personal name starts inside [pos, endpos)."""
    for m in _NAME_START_RE.finditer(text, pos, endpos):
        before = text[m.start() - 1] if m.start() else ""
        at_word_start = not "\u4e00" <= before <= "\u9fff" or before in _NAME_AFTER
        follow = _NAME_FOLLOW_RE if at_word_start else _STRONG_FOLLOW_RE
        base = m.end()
        for size in (1, 2) if m.group("nick") is None else (1,):
            given = text[base : base + size]
            if len(given) < size or any(
                not "\u4e00" <= ch <= "\u9fff" or ch in _NOT_GIVEN for ch in given
            ):
                break
            name = text[m.start() : base + size]
            if name in _NAME_STOP or name[:2] in _NAME_STOP:
                break
            if follow.match(text, base + size):
                return True
    return False


def _generic_person(text: str, pos: int, endpos: int) -> bool:
    for m in _GENERIC_RE.finditer(text, pos, endpos):
        if text.startswith("们", m.end()):
            continue
        if _GOVERNED_RE.search(text, max(0, m.start() - 4), m.start()):
            continue
        return True
    return False


def _specific_person(text: str, pos: int, endpos: int, *, self_counts: bool) -> bool:
    if _PRONOUN_RE.search(text, pos, endpos) or _SPECIFIC_RE.search(text, pos, endpos):
        return True
    if self_counts and _SELF_RE.search(text, pos, endpos):
        return True
    return _has_name(text, pos, endpos)


# --------------------------------------------------------------------------------------
# Grades and ranks
# --------------------------------------------------------------------------------------

_SUBJECT_RE: Final = re.compile(
    r"语文|数学|英语|物理|化学|生物|历史|地理|政治|道德与法治|道法|科学|信息技术|体育|音乐|美术|绩点"
    r"|总分|期中|期末|月考|周考|周测|模拟考|一模|二模|三模|中考|高考|会考|学考|考试|测验|测试"
    r"|单元测|小测|随堂测|听写|默写|作文|成绩|分数|考核|竞赛"
    + "|"
    + _en(
        *_words(
            "math maths mathematics english physics chemistry biology history exam exams test tests"
            " quiz score scores grade grades gpa midterm final"
        )
    )
)
_CN_NUM: Final = "[零一二三四五六七八九十百两〇]"
_NUM: Final = rf"(?:[0-9]++|{_CN_NUM}++)"
# What a rank or position number is not followed by when it counts something else.
_NOT_RANK_TAIL: Final = (
    r"(?!\s*(?:次|周|节|课|单元|章|题|学期|个|届|批|期|天|组|页|轮|场|阶段|部分|行|段|句|排|列"
    r"|小题|大题|道|年|月))"
)


class _Kind(StrEnum):
    SCORE = "score"  # needs subject context and attribution
    RANK_SELF = "rank_self"  # 排名第N: its own result verb; needs subject or person context
    RANK_SCOPE = "rank_scope"  # 年级第N名: its own context; needs attribution
    RANK_PLAIN = "rank_plain"  # 第N名: needs subject context and attribution
    TRANSCRIPT = "transcript"  # 成绩单: needs a specific owner


_GRADE_ITEMS: Final[tuple[tuple[re.Pattern[str], _Kind, bool], ...]] = (
    # (pattern, kind, is a number that a spec prefix such as 满分/每题 can disqualify)
    (
        re.compile(
            r"[0-9](?<![0-9.][0-9])[0-9]*(?:\.[0-9]+)?\s*多?\s*(?:分(?![钟之析别成为组类配享布解子母段"
            r"开期批层工散支针秒米贝饱熟制辨裂化流队校区院部店行担寸])|"
            + _en("point", "points", "pts", "marks")
            + ")"
        ),
        _Kind.SCORE,
        True,
    ),
    (
        re.compile(
            rf"(?:得分|分数|成绩|总分|绩点|{_en('score', 'scored', 'scores', 'gpa')})"
            r"\s*(?:是|为|:|of|is|was)?\s*"
            r"[0-9]+(?:\.[0-9]+)?(?![0-9.]|\s*(?:分|%|人|名|题|道|个|门|次|年|月|日|号|页|课|章|节"
            r"|届|级|班|天|周|小时))"
        ),
        _Kind.SCORE,
        True,
    ),
    (
        re.compile(
            r"(?:语文|数学|英语|物理|化学|生物|历史|地理|政治|道法|科学)\s*:?\s*[0-9]{1,3}"
            r"(?:\.[0-9])?(?![0-9.]|\s*(?:年|班|届|题|道|页|课|章|节|单元|册|版|分|个|次|人|%|级"
            r"|小时|天|周|号|期|讲|套|张|份|遍|篇|本|上|下))"
        ),
        _Kind.SCORE,
        True,
    ),
    (
        re.compile(r"[0-9](?<![0-9./][0-9])[0-9]{0,2}(?:\.[0-9]+)?\s*/\s*[0-9]{2,3}(?![0-9/])"),
        _Kind.SCORE,
        True,
    ),
    (
        re.compile(
            r"(?:等级|评级|等第|成绩|得了|拿了|考了|得到|评为|获评|获得|"
            + _en("grade", "graded", "grades", "got")
            + r")\s*"
            r"[\u4e00-\u9fff]{0,3}?(?:是|为|:|of|is|was|an?)?\s*[A-F][+-]?(?![A-Za-z0-9])"
        ),
        _Kind.SCORE,
        False,
    ),
    (
        re.compile(
            rf"(?:考了|得了|拿了|考到|考得|考|只有|才|仅)\s*(?:{_CN_NUM}{{1,5}}多?\s*分(?![钟之])"
            r"|满分)"
        ),
        _Kind.SCORE,
        False,
    ),
    (
        re.compile(
            rf"(?:排名|名次)\s*(?:是|为|:)?\s*(?:倒数)?\s*(?:第\s*)?{_NUM}(?:\s*名)?{_NOT_RANK_TAIL}"
            + rf"|{_en('rank', 'ranked')}\s*(?:#|[Nn]o\.?\s*)?[0-9]+"
        ),
        _Kind.RANK_SELF,
        False,
    ),
    (
        re.compile(
            r"(?:年级|班级|班上|班里|全班|全校|全年级|级部|全区|全市|全县|全省)\s*(?:排名|排)?\s*"
            rf"(?:倒数)?\s*第\s*{_NUM}(?:\s*名)?{_NOT_RANK_TAIL}"
        ),
        _Kind.RANK_SCOPE,
        False,
    ),
    (
        re.compile(
            rf"倒数\s*第\s*{_NUM}(?:\s*名|{_NOT_RANK_TAIL})|第\s*{_NUM}\s*名|前\s*{_NUM}\s*名|名次"
        ),
        _Kind.RANK_PLAIN,
        False,
    ),
    (
        re.compile(r"成绩单|成绩表|成绩条|分数条|分数单|成绩册|成绩报告单?|排名表|排名榜"),
        _Kind.TRANSCRIPT,
        False,
    ),
)

# A score right after these describes the paper, not a result: 满分100分, 每小题3分, 占10分
# (but 考了满分100分 is a result).
_SPEC_PREFIX_RE: Final = re.compile(
    r"(?:(?<!考了)(?<!得了)(?<!拿了)(?<!考到)(?<![考得拿])满分|总分值|分值"
    r"|每(?:个?小题|小问|道题?|题|空|问|个|项|处|格|一题|一问|部分)"
    r"|本题|该题|此题|这题|本大题|本小题|这道题|小题|大题"
    r"|共|占|计|合计|总计|一共|及格线|及格|分数线|录取线|试卷|卷面|全卷|本卷|卷子|整卷|题目)"
    r"(?:的)?(?:总分|满分)?\s*(?:为|是|:|有|了|约|达)?\s*$"
)
# Wishes and hypotheses are not results: 希望他数学考到90分, 如果考了60分.
_HYPOTHETICAL_RE: Final = re.compile(
    r"希望|目标|争取|力争|要求|如果|假如|假设|要达到|需要达到|需达到|达到|想考|想拿|能考|能拿|才能"
)
_RESULT_RE: Final = re.compile(
    r"考了|考到|考得|考出|得了|得到|拿了|拿到|获得|得分|分数是|分数为|成绩是|成绩为|成绩:|只有"
    r"|排名|排在|名列|位列|只考|才考|仅考|" + _en("scored", "got", "received", "earned", "ranked")
)
_RESULT_TAIL_RE: Final = re.compile(r"[考才只仅]\s*$")
_EXAM_VERB_TAIL_RE: Final = re.compile(r"考[了到得出]?\s*$")
_TEMPLATE_AFTER_RE: Final = re.compile(r"^.{0,4}?(?:模板|模版|格式|样式|样板|表头|设计|制作|怎么)")


@dataclass(frozen=True, slots=True)
class _Item:
    start: int
    end: int
    kind: _Kind
    spec_sensitive: bool


def _grade_items(norm: str) -> list[_Item]:
    items: list[_Item] = []
    for pattern, kind, spec_sensitive in _GRADE_ITEMS:
        for m in pattern.finditer(norm):
            if "/" in m.group() and not _score_fraction(m.group()):
                continue
            items.append(_Item(m.start(), m.end(), kind, spec_sensitive))
    return items


def _score_fraction(value: str) -> bool:
    """58/100 is a score; 9/3 or 150/120 is not."""
    got, _, full = value.partition("/")
    return float(got) <= float(full)


def _grade_has_context(doc: _Doc, item: _Item, lo: int, hi: int) -> bool:
    text = doc.text
    if item.kind in (_Kind.RANK_SCOPE, _Kind.TRANSCRIPT):
        return True
    near = _SUBJECT_RE.search(text, _back(text, item.start, lo), _ahead(text, item.end, hi))
    if near:
        return True
    if item.kind is _Kind.RANK_SELF:
        return _grade_person(text, _back(text, item.start, lo), _ahead(text, item.end, hi))
    # 考了 58 分: the verb itself says it is an exam result.
    return bool(_EXAM_VERB_TAIL_RE.search(text, max(lo, item.start - 4), item.start))


def _grade_person(text: str, pos: int, endpos: int) -> bool:
    return _specific_person(text, pos, endpos, self_counts=False) or _generic_person(
        text, pos, endpos
    )


def _grade_excluded(doc: _Doc, item: _Item, lo: int) -> bool:
    text = doc.text
    if item.kind is _Kind.TRANSCRIPT:
        return bool(_TEMPLATE_AFTER_RE.match(text[item.end : item.end + 8]))
    if item.spec_sensitive and _SPEC_PREFIX_RE.search(text, max(lo, item.start - 8), item.start):
        return True
    return bool(_HYPOTHETICAL_RE.search(text, max(lo, item.start - 10), item.start))


def _grade_attributed(doc: _Doc, item: _Item, lo: int) -> bool:
    text = doc.text
    if item.kind is _Kind.RANK_SELF:
        return True
    if item.kind is _Kind.TRANSCRIPT:
        # Only a named or pointed-at owner: 张三的成绩单, 他的成绩单 (not 学生成绩单模板).
        return _specific_person(text, max(lo, item.start - 8), item.start, self_counts=False)
    if _RESULT_RE.search(text, max(lo, item.start - 6), item.end):
        return True
    if _RESULT_TAIL_RE.search(text, max(lo, item.start - 3), item.start):
        return True
    return _grade_person(text, _back(text, item.start, lo), item.start)


def _grade_spans(doc: _Doc) -> list[tuple[int, int]]:
    items = _grade_items(doc.text)
    if not items:
        return []
    by_sentence: dict[tuple[int, int], list[_Item]] = {}
    for item in items:
        by_sentence.setdefault(doc.sentence(item.start), []).append(item)
    spans: list[tuple[int, int]] = []
    for (lo, hi), group in by_sentence.items():
        relevant = [
            it
            for it in group
            if not _grade_excluded(doc, it, lo) and _grade_has_context(doc, it, lo, hi)
        ]
        # One attributed result makes the rest of the sentence's results that person's
        # too: 李华期中总分512分，年级第35名.
        if any(_grade_attributed(doc, it, lo) for it in relevant):
            spans.extend(doc.clause_span(it.start, it.end) for it in relevant)
    return spans


# --------------------------------------------------------------------------------------
# Health
# --------------------------------------------------------------------------------------

_HEALTH_TERMS: Final = _words(
    "抑郁症 抑郁倾向 抑郁 忧郁症 焦虑症 焦虑障碍 惊恐障碍 多动症 注意缺陷 "
    "抽动症 妥瑞 自闭症 孤独症 阿斯伯格 癫痫 羊癫疯 哮喘 先天性心脏病 先心病 "
    "心脏病 糖尿病 白血病 癌症 癌 肿瘤 过敏 精神分裂 双相情感障碍 双相障碍 "
    "躁郁 强迫症 厌食症 暴食症 进食障碍 地中海贫血 贫血 血友病 乙肝 肝炎 "
    "艾滋 结核 残疾 残障 智力障碍 智障 发育迟缓 脑瘫 唐氏综合征 读写障碍 "
    "阅读障碍 学习障碍 听力障碍 视力障碍 弱视 近视 色盲 色弱 口吃 自残 自伤 "
    "自杀倾向 自杀念头 轻生 心理疾病 精神疾病 精神病 心理问题 住院 服药 吃药 "
    "心理咨询 心理治疗 诊断 确诊 病假 骨折 化疗 手术 失眠 肾病 红斑狼疮 "
    "心理创伤 创伤后应激 高血压 高血糖 低血糖 心肌炎 心律不齐 肾炎 甲亢 甲减 "
    "脊柱侧弯 偏头痛 鼻炎 湿疹 降压药 胰岛素 安眠药 抗抑郁药 精神类药物 "
)
_HEALTH_EN_TERMS: Final = _words(
    "adhd hiv ocd ptsd autism autistic epilepsy asthma diabetes cancer leukemia depression"
    " dyslexia bipolar schizophrenia anorexia hospitalised hospitalized"
)
# The lookahead on the possible first characters lets the engine skip most positions
# (a plain alternation of this size is ten times slower).
_HEALTH_TERM_RE: Final = re.compile(
    "(?=["
    + "".join(sorted({t[0] for t in _HEALTH_TERMS} | {"双"}))
    + "".join(sorted({c for t in _HEALTH_EN_TERMS for c in (t[0].lower(), t[0].upper())}))
    + "])(?:"
    + "|".join(re.escape(t) for t in sorted(_HEALTH_TERMS, key=len, reverse=True))
    + r"|双相(?!流|合金|钢)|"
    + _en(*_HEALTH_EN_TERMS)
    + ")"
)
_DIAGNOSIS_RE: Final = re.compile(
    r"确诊|诊断为|诊断出|被诊断|查出|检查出|患有|患上|患了|得了|病史|在吃|在服|服用|正在治疗"
    r"|接受治疗|住院治疗|发作|复发|"
    + _en("diagnosed", "suffer from", "suffers from", "treated for")
)
# Literary or emotional use: 表达了抑郁的情绪, 抒发焦虑之情.
_LITERARY_BEFORE_RE: Final = re.compile(
    r"表达|抒发|表现|体现|描写|刻画|渲染|烘托|流露|透露|传达|营造|充满|寄托|基调"
)
_LITERARY_AFTER_RE: Final = re.compile(
    r"的?\s*(?:情绪|心情|之情|情感|氛围|色彩|基调|情怀|气氛|意境|心境|情调|意象|风格|诗|词|文学)"
)
# A teaching topic rather than a person's condition: 关于预防近视的班会课, 糖尿病的成因.
_TOPIC_BEFORE_RE: Final = re.compile(
    r"关于|预防|防治|科普|讲解|讲述|介绍|了解|认识|什么是|如何|怎样|针对|应对|识别|主题|话题"
    r"|宣传|远离|避免|防范|有关|以\s*[\"'“‘《「]|讲讲|讨论|研究|探究|常见"
)
_TOPIC_AFTER_RE: Final = re.compile(
    r"成因|原因|症状|表现|预防|防治|知识|科普|危害|机制|原理|定义|分类|特点|讲座|主题|班会|宣传|课"
    r"|教育|相关|患者|病人|病例|案例|急救|常识|手抄报|宣讲|是什么|为主题|细胞|科学|行为|言论"
)
# Education senses of words in the lexicon: 学情诊断, 诊断性测试.
_EDU_SENSE_BEFORE_RE: Final = re.compile(
    r"(?:学情|教学|学业|错因|错题|故障|课堂|考试|作业|知识|问题)$"
)
_EDU_SENSE_AFTER_RE: Final = re.compile(r"性|测|卷|练|题|评价|分析|报告单?(?:显示|上)")
# A specific person owns the condition directly: 他的近视, 我有哮喘, 女儿一直过敏. This
# wins over a topic word (他的近视原因是…); a generic 学生的近视 does not.
_DIRECT_OWNER_RE: Final = re.compile(
    r"(?:(?<![其吉])他|她|(?<![帮给为替让请和跟与])我|儿子|女儿|该生)(?:们)?(?:同学)?"
    r"(?:的|有|也有|还有|患|一直有|从小有|有点|有些|最近有点|最近|一直|经常|总是|因|因为)?\s*$"
)
_HEALTH_EDU_SENSE: Final = frozenset({"诊断", "确诊"})
_HAS_BEFORE_RE: Final = re.compile(r"(?:有|患|得了|查出)\s*$")
_NOT_OWNED_RE: Final = re.compile(
    r"不想|不要|避免|防止|以免|如果|假如|假设|万一|宣扬|鼓励|劝|预防|防范|"
    + _en("avoid", "prevent", "if")
)
# Words for a medical act or event rather than a condition.
_WEAK_TERMS: Final = frozenset(
    _words("诊断 确诊 手术 住院 服药 吃药 心理咨询 心理治疗 病假 化疗 心理问题")
)
_WEAK_MODIFIER_RE: Final = re.compile(r"的$|医疗$|医学$|临床$|正确$|错误$|准确$|必要$")


def _health_owned(doc: _Doc, term: str, start: int, end: int, lo: int, hi: int) -> bool:
    """Whether the condition at [start, end) belongs to someone (see module docstring)."""
    text = doc.text
    before_lo, after_hi = _back(text, start, lo), _ahead(text, end, hi)
    if _DIAGNOSIS_RE.search(text, before_lo, start) or _DIAGNOSIS_RE.search(text, end, after_hi):
        return True
    if _DIRECT_OWNER_RE.search(text, max(lo, start - 8), start):
        return True
    c_lo, c_hi = doc.clause_span(start, end)
    # A wish, a warning or a hypothesis is nobody's condition: 我不想过敏, 避免自伤行为.
    if _NOT_OWNED_RE.search(text, c_lo, start):
        return False
    # A teaching topic (关于预防近视的班会课) is nobody's condition, even next to 我.
    if _TOPIC_BEFORE_RE.search(text, max(c_lo, start - 8), start) or _TOPIC_AFTER_RE.search(
        text, end, min(c_hi, end + 8)
    ):
        return False
    # 诊断/手术 as a noun of medicine (正确的诊断, 医疗诊断), not someone's event.
    if term in _WEAK_TERMS and _WEAK_MODIFIER_RE.search(text, max(c_lo, start - 2), start):
        return False
    if _specific_person(text, before_lo, start, self_counts=True) or _specific_person(
        text, end, after_hi, self_counts=True
    ):
        return True
    # 他身高170，体重偏胖，有高血压: the subject of the sentence, further away, still owns it.
    if _HAS_BEFORE_RE.search(text, max(c_lo, start - 4), start) and _specific_person(
        text, lo, start, self_counts=True
    ):
        return True
    # 学生/孩子 alone is weaker: any topic word in the sentence makes it general.
    if _TOPIC_BEFORE_RE.search(text, lo, hi):
        return False
    return _generic_person(text, before_lo, start) or _generic_person(text, end, after_hi)


def _health_spans(doc: _Doc) -> list[tuple[int, int]]:
    text = doc.text
    spans: list[tuple[int, int]] = []
    for m in _HEALTH_TERM_RE.finditer(text):
        start, end = m.span()
        lo, hi = doc.sentence(start)
        if _LITERARY_BEFORE_RE.search(text, max(lo, start - 6), start) or _LITERARY_AFTER_RE.match(
            text, end, min(hi, end + 6)
        ):
            continue
        if m.group() in _HEALTH_EDU_SENSE and (
            _EDU_SENSE_BEFORE_RE.search(text, max(lo, start - 4), start)
            or _EDU_SENSE_AFTER_RE.match(text, end, hi)
        ):
            continue
        if _health_owned(doc, m.group(), start, end, lo, hi):
            spans.append(doc.clause_span(start, end))
    return spans


# --------------------------------------------------------------------------------------
# Putting the spans together
# --------------------------------------------------------------------------------------


def _merge_clauses(doc: _Doc, category: Category, spans: list[tuple[int, int]]) -> list[_Span]:
    """Join the clause spans of one category that touch or sit side by side in a sentence."""
    merged: list[_Span] = []
    for start, end in sorted(spans):
        if merged:
            _, m_start, m_end = merged[-1]
            if start <= m_end or doc.only_clause_gap(m_end, start):
                merged[-1] = (category, m_start, max(m_end, end))
                continue
        merged.append((category, start, end))
    return merged


def _text_spans(norm: str) -> list[_Span]:
    doc = _Doc(norm)
    return _merge_clauses(doc, Category.GRADE, _grade_spans(doc)) + _merge_clauses(
        doc, Category.HEALTH, _health_spans(doc)
    )


def _resolve(spans: list[_Span]) -> list[_Span]:
    """Non-overlapping spans: an outer span swallows what it overlaps."""
    ordered = sorted(spans, key=lambda s: (s[1], -s[2], _PRIORITY[s[0]]))
    out: list[_Span] = []
    for category, start, end in ordered:
        if out and start < out[-1][2]:
            prev_category, prev_start, prev_end = out[-1]
            out[-1] = (prev_category, prev_start, max(prev_end, end))
            continue
        out.append((category, start, end))
    return out
