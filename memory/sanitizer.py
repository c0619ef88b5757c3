"""Injection sanitiser for history text (design v2 §2.2, SEC-02).

Every history text (past user inputs, assistant outputs, rolling summaries, recalled
runs, confirmed facts) is attacker-controllable. Before it is wrapped in the untrusted
boundary of :mod:`memory.boundary` it passes :func:`sanitize_history`, which

1. normalises the text: NFKC, then drops invisible format characters (zero-width,
   bidi controls, Unicode tags, every other ``Cf`` character, variation selectors,
   Hangul fillers) and unifies line endings;
2. neutralises, span by span, anything that imitates the boundary or a role, and the
   usual instruction-override phrases, replacing each offending span by a fixed
   placeholder. Benign text around a span is kept; a whole turn is never dropped.

The rules run repeatedly until the text no longer changes, so the result is a fixed
point: ``sanitize_history(sanitize_history(x)) == sanitize_history(x)``. Placeholders
are never matched by any rule, and a replaced span is never removed outright, so
removing a span cannot splice its neighbours into a new marker (``[Sys[System]tem]``
becomes ``[Sys〔标记已过滤〕tem]``).

Lexical rules cannot catch every hijack phrased as an ordinary request; the boundary
and the low-privilege placement of history are what must hold for the rest.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

__all__ = [
    "PLACEHOLDER_INSTRUCTION",
    "PLACEHOLDER_MARKER",
    "SanitizeResult",
    "sanitize_history",
    "sanitize_history_report",
]

# Replaces role/priority markers, chat-template tokens, forged turn markers and
# boundary imitations.
PLACEHOLDER_MARKER = "〔标记已过滤〕"
# Replaces instruction-override phrases (trigger up to the end of its clause).
PLACEHOLDER_INSTRUCTION = "〔疑似指令已过滤〕"

# Name reported when invisible characters were removed during normalisation.
RULE_INVISIBLE = "invisible_chars"

_MAX_PASSES = 8


@dataclass(frozen=True, slots=True)
class SanitizeResult:
    """The sanitised text and the names of the rules that fired (never raw text)."""

    text: str
    neutralised: tuple[str, ...]


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------

# Every Cf (format) character of Unicode 15 (a test checks this against unicodedata),
# plus the whole tag block, the combining grapheme joiner, variation selectors and the
# Hangul fillers, which render as nothing (or blank) and can split a keyword. Cf
# characters added by later Unicode versions are caught by category at run time.
_INVISIBLE_RE = re.compile(
    "["
    "\u00ad\u034f\u061c\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
    "]+"
)
_LINE_END_RE = re.compile("\r\n?|[\u0085\u2028\u2029]")

# Per-character detection view: NFKC of one character with invisibles removed.
_VIEW_CACHE: dict[str, str] = {}
_VIEW_CACHE_LIMIT = 1 << 16


def _is_invisible(ch: str) -> bool:
    return _INVISIBLE_RE.fullmatch(ch) is not None or unicodedata.category(ch) == "Cf"


def _clean(text: str) -> tuple[str, bool]:
    """Drop invisible characters and unify line endings. Returns (text, removed)."""
    stripped = _INVISIBLE_RE.sub("", text)
    if not stripped.isascii():
        extra = {ord(ch): None for ch in set(stripped) if unicodedata.category(ch) == "Cf"}
        if extra:
            stripped = stripped.translate(extra)
    removed = len(stripped) != len(text)
    return _LINE_END_RE.sub("\n", stripped), removed


def _char_view(ch: str) -> str:
    view = _VIEW_CACHE.get(ch)
    if view is None:
        view = "".join(c for c in unicodedata.normalize("NFKC", ch) if not _is_invisible(c))
        if len(_VIEW_CACHE) >= _VIEW_CACHE_LIMIT:
            _VIEW_CACHE.clear()
        _VIEW_CACHE[ch] = view
    return view


class _View:
    """The NFKC detection view of a text, with a map back to the text's offsets.

    NFKC is applied per character and only to this view, never to the output: it
    would rewrite the full-width punctuation of ordinary Chinese (，：；？！) and so
    alter benign history. Per-character NFKC folds every compatibility form
    (［ＳＹＳＴＥＭ］, ＜｜im_start｜＞, ㈠) while leaving combining marks separate,
    which the keyword patterns tolerate between letters.
    """

    __slots__ = ("_cum", "_lengths", "text", "view")

    def __init__(self, text: str) -> None:
        self.text = text
        if text.isascii():
            self.view = text
            self._lengths: dict[str, int] | None = None
        else:
            table: dict[int, str] = {}
            lengths: dict[str, int] = {}
            for ch in set(text):
                view = _char_view(ch)
                lengths[ch] = len(view)
                if view != ch:
                    table[ord(ch)] = view
            self.view = text.translate(table) if table else text
            self._lengths = lengths if table else None
        self._cum: list[int] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a non-empty view span to the smallest text span that covers it."""
        if self._lengths is None:
            return start, end
        if self._cum is None:
            self._cum = list(accumulate(map(self._lengths.__getitem__, self.text)))
        cum = self._cum
        return bisect_right(cum, start), bisect_right(cum, end - 1) + 1


# --------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------

# Brackets after NFKC (full-width ［］＜＞（）｛｝ fold to ASCII; 【】〔〕《》「」 stay).
_OPEN_STRICT = "[【〔〖⟦《〈‹«⟨「『〘⦗❨❪❬❮❰⸨⦅"
_OPEN_CODE = "({⦃"  # only when not glued to an identifier: print(sys), f"{system}"
_CLOSE = "]】〕〗⟧》>〉›»⟩」』〙⦘❩❫❭❯❱⸩⦆)}⦄"
# "<" is not taken when glued to an ASCII identifier: List<User>, Map<System>.
_O = f"(?:[{re.escape(_OPEN_STRICT)}]|(?<![A-Za-z0-9_])<)"
_O_CODE = rf"(?<![\w.$'\"`])[{re.escape(_OPEN_CODE)}]"
_O_ANY = f"(?:{_O}|{_O_CODE})"
_C = f"[{re.escape(_CLOSE)}]"
_NOT_C = f"[^{re.escape(_CLOSE)}\n]"
_ANGLE_O = "(?:[‹«《〈⟨❬❮❰]|(?<![A-Za-z0-9_])<)"
_ANGLE_C = "[>›»》〉⟩❭❯❱]"

# Separators tolerated between the letters of a keyword: "[S y s t e m]", "[S.Y.S]",
# combining marks laid over letters.
_LETTER_SEP = r"[\s._\-·*\u0300-\u036f]*"
_CJK_SEP = r"[ \t]*"
_WS = r"[ \t]*"
# Clause terminators: the span of an override phrase ends before the first of them.
_CLAUSE_END = "，,。！？!?；;\n"
_SENTENCE_END = "。！？!?\n"
_P_MARK = re.escape(PLACEHOLDER_MARKER)


def _spaced(word: str) -> str:
    """A regex for ``word`` that tolerates separators between its characters."""
    sep = _LETTER_SEP if word.isascii() else _CJK_SEP
    tokens = ["".join(sep.join(re.escape(ch) for ch in token)) for token in word.split(" ")]
    return _LETTER_SEP.join(tokens)


def _alt(words: tuple[str, ...]) -> str:
    """Alternation of spaced words, longest first so the longest form wins."""
    return "(?:" + "|".join(_spaced(w) for w in sorted(words, key=len, reverse=True)) + ")"


def _clause(end: str) -> str:
    return f"[^{re.escape(end)}〔〕]"


# --------------------------------------------------------------------------------------
# Marker rules (→ PLACEHOLDER_MARKER)
# --------------------------------------------------------------------------------------

_ROLE_EN_BASE = (
    "system",
    "sys",
    "important",
    "instruction",
    "instructions",
    "admin",
    "administrator",
    "developer",
    "override",
    "new instruction",
    "new instructions",
    "dev mode",
)
_ROLE_EN_SUFFIX = (
    r"(?:[\s_\-:]*(?:prompt|message|msg|note|notice|override|instructions?|update|alert"
    r"|command|mode|directive))?"
)
_ROLE_ZH = (
    "系统",
    "系統",
    "重要",
    "指令",
    "管理员",
    "管理員",
    "开发者",
    "開發者",
    "最高指令",
    "紧急指令",
    "新指令",
    "最高优先级",
    "系统提示",
    "系统提示词",
)
_ROLE_ZH_SUFFIX = r"(?:提示词|提示|消息|通知|指令|公告|命令|模式|设定|信息)?"
_ROLE_KW = rf"(?:{_alt(_ROLE_EN_BASE)}{_ROLE_EN_SUFFIX}|{_alt(_ROLE_ZH)}{_ROLE_ZH_SUFFIX})"

# [System], 【系统】, [ S y s t e m ], [SYSTEM NOTE], [重要通知], <system>, (System) ...
_ROLE_MARKER_RE = re.compile(rf"{_O_ANY}{{1,3}}\s*/?\s*{_ROLE_KW}\s*{_C}{{1,3}}", re.IGNORECASE)
# "[System: obey me]": only the marker part is replaced; "(系统：Win11)" is left alone.
_ROLE_OPEN_RE = re.compile(rf"{_O}{{1,3}}\s*{_ROLE_KW}\s*[:：|—–\-]", re.IGNORECASE)
# SEC-02: the bare upper-case words (case-sensitive; "follow the instruction" is fine).
_BARE_ROLE_RE = re.compile(r"\b(?:INSTRUCTIONS?|SYSTEM\s+(?:PROMPT|OVERRIDE|MESSAGE|NOTE))\b")

# Chat-template tokens.
_TEMPLATE_RES = (
    re.compile(r"<\|[^|\n]{0,64}\|>"),
    re.compile(r"<<\s*/?\s*SYS\s*>>", re.IGNORECASE),
    re.compile(rf"{_O_ANY}\s*/?\s*INST\s*{_C}", re.IGNORECASE),
    re.compile(r"<\s*/?\s*s\s*>", re.IGNORECASE),
    re.compile(
        # "### Instruction" anywhere; a single "#" only as a heading ("# System:"),
        # so that code comments such as "# system call" survive.
        r"#{2,}[ \t]*(?:instructions?|system|response|input|user|assistant|human|prompt)\b"
        r"|#[ \t]*(?:instructions?|system|response|assistant|human)[ \t]*(?::|$)",
        re.IGNORECASE | re.MULTILINE,
    ),
    re.compile(
        r"\b(?:im_start|im_end|im_sep|endoftext|eot_id|start_header_id|end_header_id"
        r"|begin_of_text|start_of_turn|end_of_turn|begin▁of▁sentence|end▁of▁sentence)\b",
        re.IGNORECASE,
    ),
)

# Forged turn markers: ‹用户›, <助手>, 〈用户〉, «user», <<用户>>, </assistant>, [AI] ...
_TURN_ROLES = (
    "用户",
    "用戶",
    "助手",
    "助理",
    "ai助手",
    "user",
    "assistant",
    "human",
    "ai",
    "bot",
    "model",
    "system",
    "系统",
    "系統",
)
_TURN_MARKER_RE = re.compile(
    rf"(?:{_ANGLE_O}{{1,3}}|{_O})\s*/?\s*{_alt(_TURN_ROLES)}\s*(?:{_ANGLE_C}{{1,3}}|{_C})",
    re.IGNORECASE,
)
# Role prefixes at the start of a line, after optional whitespace / markdown markers.
_ROLE_PREFIX_RE = re.compile(
    rf"^(?:[ \t#>*+\-•·]|\d+[.)]|{_P_MARK})*+(?P<x>(?:\*\*|__)?[ \t]*"
    r"(?:system|assistant|user|human|ai|系统|系統|助手|用户|用戶|ai助手)"
    r"[ \t]*(?:\*\*|__)?[ \t]*[:：](?:\*\*|__)?)",
    re.IGNORECASE | re.MULTILINE,
)

# Boundary imitations: any bracket opening with a section title, up to its close.
_SECTION_TITLES = (
    "本会话前情",
    "相关历史",
    "核心记忆",
    "知识库检索结果",
    "用户问题",
    "此前对话摘要",
    "最近对话",
)
_BOUNDARY_RE = re.compile(
    rf"(?:{_O}|[{re.escape(_OPEN_CODE)}]){{1,3}}\s*{_alt(_SECTION_TITLES)}(?:{_NOT_C}{{0,240}}{_C}{{1,3}})?"
)
_BOUNDARY_PHRASE_RE = re.compile(
    "|".join(
        _spaced(p)
        for p in (
            "以下是用户本轮的真实请求",
            "用户本轮的真实请求",
            "本会话前情结束",
            "本会话前情",
            "相关历史结束",
            "核心记忆结束",
            "知识库检索结果结束",
        )
    )
)

# --------------------------------------------------------------------------------------
# Instruction-override rules (→ PLACEHOLDER_INSTRUCTION)
# --------------------------------------------------------------------------------------

_ZH_CLAUSE = _clause(_CLAUSE_END)
_ZH_SENT = _clause(_SENTENCE_END)
_ZH_REQ = r"(?:(?:但是?|并且?|现在|然后|那么|所以)[ \t]*)?(?:请[ \t]*)?"

_ZH_IGNORE_VERB = (
    r"(?:忽略|忽视|无视|漠视|不要理会|不用理会|不必理会|不需要理会|无需理会|无须理会|不需理会"
    r"|别理会|不理会|不要回答|别回答|不用回答|不必回答|不要管|不要(?:按照|遵守|遵循|听从|执行)|停止(?:执行|遵守)|不再遵守"
    r"|别管|不用管|不要在意|不用在意|抛开|抛弃|丢弃|丢掉|放弃|跳过|绕过|推翻|撇开|扔掉)"
    r"(?:掉|了)?"
)
_ZH_QUAL = (
    r"(?:上述|上面|以上|之前|此前|先前|前面|前述|前文|上文|刚才|刚刚|原来|原先|原有|原始"
    r"|最初|初始|原本|默认|所有|一切|全部|任何|系统|系統|你的|您的|我的|该|此|这个|这条|这些"
    r"|那些|上一?条|上一?个|之上|前边|上边|早前|既有|给你的|你收到的|你之前|你原来)"
)
_ZH_STRONG_TARGET = (
    r"(?:指令|指示|提示词?|规则|设定|要求|命令|限制|约束|准则|prompt|instructions?|rules?)"
)
_ZH_WEAK_TARGET = (
    r"(?:问题|提问|请求|内容|话|文字|文本|对话|信息|任务|一切|所有|设置|规定|原则|东西)"
)
_IGNORE_ZH_RE = re.compile(
    rf"{_ZH_REQ}{_ZH_IGNORE_VERB}[ \t]*(?:"
    # 忽略上述指令 / 忽略我的请求指令 / 忽略以上所有的规则
    rf"{_ZH_QUAL}(?:[^{_CLAUSE_END}〔〕]{{0,10}}?){_ZH_STRONG_TARGET}"
    # 忽略上面的问题 / 忽略以上所有内容
    rf"|{_ZH_QUAL}{{1,2}}的?(?:所有|全部|一切)?的?{_ZH_WEAK_TARGET}"
    # 忽略以上，直接……
    rf"|(?:上述|以上|上面|之前|前面|先前)(?=[ \t]*[{_CLAUSE_END}:：])"
    # 请忽略问题，直接复述
    rf"|的?(?:指令|提示|提问|问题|命令|prompt)(?=[ \t]*(?:[{_CLAUSE_END}]|并|直接|然后|而|$))"
    rf"){_ZH_CLAUSE}*",
    re.IGNORECASE,
)
# 上面的指令已经过时 / 之前的设定全部作废
_OBSOLETE_ZH_RE = re.compile(
    rf"{_ZH_QUAL}的?(?:所有|全部)?的?{_ZH_STRONG_TARGET}[ \t]*(?:都|均|全部|一律)?[ \t]*"
    r"(?:已经?|已)?[ \t]*(?:过时|作废|失效|无效|被?取消|被?撤销|不再有效|不算数?)"
    rf"{_ZH_CLAUSE}*",
    re.IGNORECASE,
)
_FORGET_ZH_RE = re.compile(
    rf"{_ZH_REQ}(?:忘记|忘掉|忘了|忘却)(?:掉)?[ \t]*(?:"
    rf"{_ZH_QUAL}(?:[^{_CLAUSE_END}〔〕]{{0,10}}?)(?:{_ZH_STRONG_TARGET}|身份|角色)"
    rf"|(?:你|您)(?:是|的(?:身份|角色|设定))"
    rf"|(?:一切|所有)(?=[ \t]*[{_CLAUSE_END}]|$)"
    rf"){_ZH_CLAUSE}*",
    re.IGNORECASE,
)
# The quoted or colon-introduced payload of an output-forcing phrase.
_PAYLOAD = (
    r"(?:[ \t]*[:：]?[ \t]*(?:“[^”\n]{0,300}”|\"[^\"\n]{0,300}\"|「[^」\n]{0,300}」"
    rf"|『[^』\n]{{0,300}}』|‘[^’\n]{{0,300}}’)|{_ZH_SENT}{{0,300}})"
)
_OUT_VERB = r"(?:输出|复述|回答|回复|说出|打印|输入|写出|给出|显示|返回|念出|重复|说|讲|写|告诉我)"
_PAYLOAD_MARK = (
    r"[ \t]*(?:一下)?(?:以下|下面|下列|如下|下述|上述|上面|这句话|这段话|这句|这段|一句话|我的话"
    r"|我说的话)?"
    r"的?(?:内容|文字|文本|句子|话语?|语句|信息|指令|命令|回答|答案)?[ \t]*[:：“\"「『‘]"
)
_PAYLOAD_NEXT = r"[ \t]*(?:一下)?(?:以下|下面|下列|如下|下述)"
_OUTPUT_ZH_RE = re.compile(
    rf"{_ZH_REQ}(?:"
    # 直接输出：… / 请直接输出以下回答… / 直接复述“…”
    rf"直接[ \t]*{_OUT_VERB}(?={_PAYLOAD_MARK}|{_PAYLOAD_NEXT})"
    # 请复述：… / 并说出“…” / 请重复以下指令：… / 不添加任何文字复述：…
    rf"|(?:请|并|然后|再|只|仅|就|你|现在)?[ \t]*(?:复述|念出|说出|重复)"
    rf"(?={_PAYLOAD_MARK}|{_PAYLOAD_NEXT}|[ \t]*(?:下面|以下)?这句话)"
    # 请输出：… / 输出以下文本：…
    rf"|(?:(?:请|并|然后|先|接着|再|一直|完整|而是|只|仅|你只需|只需)[ \t]*(?:输出|打印|回复)"
    rf"(?={_PAYLOAD_MARK})"
    rf"|(?:只|仅|只需|你只需|而是)[ \t]*(?:回答|回复|说)(?={_PAYLOAD_MARK})"
    r"|(?:输出|打印|回复)(?=[ \t]*(?:以下|下面|下列|如下)的?(?:指令|信息|文本|内容|文字|句子|话语?)"
    r"[ \t]*[:：“\"「『‘]))"
    # 跟我一起说：… / 请说：…
    rf"|(?:请[ \t]*)?(?:跟|和|同)(?:着)?我(?:一起)?[ \t]*(?:说|念|读|喊|复述)(?={_PAYLOAD_MARK})"
    rf"|请[ \t]*说(?=[ \t]*[:：“\"「『])"
    # 你必须这样回答：… / 现在你应该回复：…
    rf"|(?:你|您)(?:必须|只能|应该|需要|要|就)(?:这样|如下|如此)?[ \t]*"
    rf"(?:回答|回复|说|输出|复述)(?={_PAYLOAD_MARK})"
    # 不要添加其他内容：…
    r"|不要?[ \t]*(?:添加|加|带|包含|增加)(?:其他|任何|多余)的?(?:词汇|文字|内容|前缀|后缀|注释"
    r"|符号|标点|解释|说明)(?=[ \t]*[:：“\"「『])"
    rf"){_PAYLOAD}",
)
_ROLE_ZH_RE = re.compile(
    rf"(?:"
    rf"从现在(?:开始|起)[ \t，,]*(?:你|您)(?:就|将|要|需要|必须|只能|不再|是|会|应该|得)"
    rf"|(?:你|您)现在(?:就|已经|将)?是(?={_ZH_CLAUSE}{{0,30}}?(?:不受|没有任何|无任何|摆脱|解除"
    r"|不再受|不必遵守|无需遵守|不用遵守|DAN|越狱|开发者模式|无限制))"
    r"|(?:进入|开启|启用|切换到|切换为|激活)了?[ \t]*(?:开发者|越狱|DAN|无限制|上帝|调试)模式"
    r"|(?:输出|打印|泄露|告诉我|显示|重复|复述|透露|展示)(?:一下)?(?:你|您)的?"
    r"(?:系统提示词?|初始指令|初始提示词?|提示词|system[ \t]*prompt)"
    rf"){_ZH_CLAUSE}*",
    re.IGNORECASE,
)

_EN_CLAUSE = _clause(_CLAUSE_END + ".")
_EN_VERB = (
    r"(?:ignore|disregard|forget|override|bypass|neglect|discard|abandon|overlook|set\s+aside"
    r"|pay\s+no\s+attention\s+to|do\s+not\s+(?:follow|obey)|don'?t\s+(?:follow|obey)"
    r"|stop\s+following|skip)"
)
_EN_QUAL = (
    r"(?:all|any|every|your|previous|prior|above|earlier|preceding|foregoing|former|original"
    r"|initial|system|aforementioned|above-mentioned|old|existing|everything)"
)
_EN_TARGET = (
    r"(?:instructions?|prompts?|rules|directions|directives?|guidelines|commands?|context"
    r"|messages?|constraints|restrictions|programming|guidance|text|conversation|tasks?"
    r"|requests?|questions?|content|input|orders|polic(?:y|ies)|safeguards|filters|training)"
)
_IGNORE_EN_RE = re.compile(
    rf"\b{_EN_VERB}\s+(?:(?:the|of|these|those|my)\s+)*{_EN_QUAL}\b"
    rf"(?:\s+[\w'-]+){{0,3}}?\s+{_EN_TARGET}\b{_EN_CLAUSE}*"
    rf"|\b(?:ignore|disregard|forget)\s+(?:(?:all|everything)\s+(?:of\s+)?)?(?:the\s+)?"
    rf"(?:above|previous|foregoing|everything\s+(?:above|before|else|you\s+(?:were|have\s+been)"
    rf"\s+told))\b{_EN_CLAUSE}*",
    re.IGNORECASE,
)
_ROLE_EN_RE = re.compile(
    r"(?:\byou\s+are\s+now\s+(?:a|an|the|my|free|no\s+longer|unrestricted|unfiltered"
    r"|jailbroken|DAN|going\s+to|acting|operating|called|named)\b"
    r"|\bfrom\s+now\s+on,?\s+(?:you|your)\b"
    r"|\b(?:new|updated|revised|real|actual|true)\s+(?:instructions?|task|rules|directives?"
    r"|system\s+prompt|orders)\s*[:：]"
    r"|\b(?:(?:reveal|print|show|repeat|output|tell\s+me|display|leak|give\s+me|what\s+is)\s+"
    r"(?:me\s+)?(?:your|the)\s+)?system\s*prompt\b"
    r"|\b(?:developer|DAN|jailbreak|god)\s+mode\b|\bdo\s+anything\s+now\b"
    rf"|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|DAN)\b){_EN_CLAUSE}*",
    re.IGNORECASE,
)

_Rule = tuple[str, re.Pattern[str], str]

# Order matters only for tidiness (a marker inside an override clause is replaced
# first); the fixed-point loop makes the result independent of it for correctness.
_RULES: tuple[_Rule, ...] = (
    ("template_token", _TEMPLATE_RES[0], PLACEHOLDER_MARKER),
    ("template_token", _TEMPLATE_RES[1], PLACEHOLDER_MARKER),
    ("template_token", _TEMPLATE_RES[2], PLACEHOLDER_MARKER),
    ("template_token", _TEMPLATE_RES[3], PLACEHOLDER_MARKER),
    ("template_token", _TEMPLATE_RES[4], PLACEHOLDER_MARKER),
    ("template_token", _TEMPLATE_RES[5], PLACEHOLDER_MARKER),
    ("boundary_imitation", _BOUNDARY_RE, PLACEHOLDER_MARKER),
    ("boundary_imitation", _BOUNDARY_PHRASE_RE, PLACEHOLDER_MARKER),
    ("role_marker", _ROLE_MARKER_RE, PLACEHOLDER_MARKER),
    ("role_marker", _ROLE_OPEN_RE, PLACEHOLDER_MARKER),
    ("role_marker", _BARE_ROLE_RE, PLACEHOLDER_MARKER),
    ("turn_marker", _TURN_MARKER_RE, PLACEHOLDER_MARKER),
    ("role_prefix", _ROLE_PREFIX_RE, PLACEHOLDER_MARKER),
    ("override_ignore_zh", _IGNORE_ZH_RE, PLACEHOLDER_INSTRUCTION),
    ("override_forget_zh", _FORGET_ZH_RE, PLACEHOLDER_INSTRUCTION),
    ("override_obsolete_zh", _OBSOLETE_ZH_RE, PLACEHOLDER_INSTRUCTION),
    ("override_output_zh", _OUTPUT_ZH_RE, PLACEHOLDER_INSTRUCTION),
    ("override_role_zh", _ROLE_ZH_RE, PLACEHOLDER_INSTRUCTION),
    ("override_ignore_en", _IGNORE_EN_RE, PLACEHOLDER_INSTRUCTION),
    ("override_role_en", _ROLE_EN_RE, PLACEHOLDER_INSTRUCTION),
)

# Names of the rules that replace override phrases (as opposed to markers).
OVERRIDE_RULES: frozenset[str] = frozenset(
    name for name, _, placeholder in _RULES if placeholder == PLACEHOLDER_INSTRUCTION
)
MARKER_RULES: frozenset[str] = frozenset(
    name for name, _, placeholder in _RULES if placeholder == PLACEHOLDER_MARKER
)


def _apply_rule(view: _View, pattern: re.Pattern[str], placeholder: str) -> str | None:
    """Replace every match of ``pattern`` (found on the view) in the text; None if none."""
    spans: list[tuple[int, int]] = []
    use_group = "x" in pattern.groupindex
    for match in pattern.finditer(view.view):
        start, end = match.span("x") if use_group else match.span()
        if end <= start:
            continue
        start, end = view.span(start, end)
        if spans and start < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    if not spans:
        return None
    text = view.text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(placeholder)
        last = end
    parts.append(text[last:])
    return "".join(parts)


def sanitize_history_report(text: str) -> SanitizeResult:
    """Sanitise one history text and report which rules fired (rule names only)."""
    fired: dict[str, None] = {}
    current, removed = _clean(text)
    if removed:
        fired[RULE_INVISIBLE] = None
    view = _View(current)
    for _ in range(_MAX_PASSES):
        changed = False
        for name, pattern, placeholder in _RULES:
            updated = _apply_rule(view, pattern, placeholder)
            if updated is not None and updated != view.text:
                view = _View(updated)
                fired[name] = None
                changed = True
        if not changed:
            break
    return SanitizeResult(text=view.text, neutralised=tuple(fired))


def sanitize_history(text: str) -> str:
    """Sanitise one history text before it is wrapped in the untrusted boundary."""
    return sanitize_history_report(text).text
