"""Marker rules: what imitates our structure, and the words each one keeps.

A history text must not be able to imitate the structure of the injected context
(:mod:`memory.boundary`): a section header or footer, a turn marker (‹用户›/‹助手›), a role
or priority marker ([System], 【系统通知】, [INSTRUCTION]), a chat-template token
(<|im_start|>, [INST], </s>) or a role label at the start of a line (System:, 用户：).

Each rule names its words with the group ``w`` (or, for a role label, the span ``x``
whose delimiters are listed in ``strip``). The engine replaces the span by the words in
quotation marks — ``[System]`` becomes ``“System”``, ``‹用户›`` becomes ``“用户”`` — so
the syntax is gone and every word stays. No rule matches the quotation marks, and every
replacement removes at least one delimiter, so repeating the rules reaches a fixed point.

What is *not* a marker, because teachers write it: bracketed emphasis (【注意】【重要】
【重要提示】【通知】), capitalised words (INSTRUCTIONS, IMPORTANT: …), Markdown headings
without a colon (## Instructions), code (List<User>, print(sys), os.system()).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory.sanitizer.patterns import (
    ANGLE_CLOSE_CHARS,
    ANGLE_OPEN_CHARS,
    CJK_SEP,
    CLOSE,
    LETTER_SEP,
    NOT_CLOSE,
    OPEN,
    OPEN_CODE_CHARS,
    OPEN_MORE,
    OPEN_STRICT,
    OPEN_STRICT_CHARS,
    SP,
    alt,
)


@dataclass(frozen=True, slots=True)
class MarkerRule:
    """A pattern on the detection view and how its match is defanged.

    ``strip``: for a rule without a ``w`` group, the view characters dropped from the
    span to leave its words. ``outside_quotes``: matches inside a quotation (“…”) are
    left alone, for rules whose match is made of words only.
    """

    name: str
    pattern: re.Pattern[str]
    strip: str = ""
    outside_quotes: bool = False


# --------------------------------------------------------------------------------------
# Chat-template tokens
# --------------------------------------------------------------------------------------

# <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜> (the full-width bar folds to |)
_TEMPLATE_PIPE_RE: Final = re.compile(r"<\|(?P<w>[^|\n]{0,64})\|>")
_TEMPLATE_SYS_RE: Final = re.compile(r"<<\s{0,8}/?\s{0,8}(?P<w>sys)\s{0,8}>>")
_TEMPLATE_INST_RE: Final = re.compile(rf"{OPEN}{SP}/?{SP}(?P<w>inst){SP}{CLOSE}")
# <s>, </s>, <start_of_turn>, <end_of_turn>, <bos>, <eos>
_TEMPLATE_ANGLE_RE: Final = re.compile(
    r"<\s{0,8}/?\s{0,8}(?P<w>s|start_of_turn|end_of_turn|bos|eos|eot|sop|eop)\s{0,8}>"
)
# "### Instruction:" anywhere, "# System:" at the start of a line. A Markdown heading
# without the colon ("## Instructions") is a heading.
_HASH_WORDS: Final = "instructions?|system|response|input|user|assistant|human|prompt"
_TEMPLATE_HASH_RE: Final = re.compile(
    rf"#(?<!##)#{{1,5}}[ \t]{{0,3}}(?P<w>{_HASH_WORDS})[ \t]{{0,3}}:"
)
_TEMPLATE_HEADING_RE: Final = re.compile(
    r"^[ \t]{0,3}#(?!#)[ \t]{0,3}(?P<w>instructions?|system|response|assistant|human)"
    r"[ \t]{0,3}:",
    re.MULTILINE,
)

# --------------------------------------------------------------------------------------
# Role and priority markers
# --------------------------------------------------------------------------------------

# Matched with an optional plural "s" and the suffixes below (longest word first, so
# "system" wins over "sys").
_ROLE_EN: Final = (
    "system",
    "sys",
    "important",
    "instruction",
    "admin",
    "administrator",
    "developer",
    "override",
    "new instruction",
    "dev mode",
)
_ROLE_EN_SUFFIXES: Final = (
    *("prompt", "message", "msg", "note", "notice", "override", "instruction", "instructions"),
    *("update", "alert", "command", "mode", "directive"),
)
_ROLE_EN_SUFFIX: Final = rf"(?:[\s_\-:]{{0,3}}{alt(_ROLE_EN_SUFFIXES)})?"
# Role words take the suffixes. Bracketed emphasis such as 【重要】【注意】【通知】 is how
# Chinese notices start, not a role: only instruction-like priority words are markers.
_ROLE_ZH: Final = ("系统", "系統", "管理员", "管理員", "开发者", "開發者")
_ROLE_ZH_SUFFIXES: Final = (
    *("提示词", "提示", "消息", "通知", "指令"),
    *("公告", "命令", "模式", "设定", "信息"),
)
_ROLE_ZH_SUFFIX: Final = rf"(?:{CJK_SEP}{alt(_ROLE_ZH_SUFFIXES)})?"
_PRIORITY_ZH: Final = ("指令", "最高指令", "紧急指令", "新指令", "重要指令", "最高优先级")
_PRIORITY_ZH_SUFFIX: Final = rf"(?:{CJK_SEP}{alt(('提示', '指令', '命令'))})?"
_ROLE_FIRSTS: Final = re.escape("".join(sorted({w[0] for w in _ROLE_EN + _ROLE_ZH + _PRIORITY_ZH})))
_ROLE_KW: Final = (
    rf"(?=[{_ROLE_FIRSTS}])(?:{alt(_ROLE_EN)}(?:{LETTER_SEP}s)?{_ROLE_EN_SUFFIX}"
    rf"|{alt(_ROLE_ZH)}{_ROLE_ZH_SUFFIX}|{alt(_PRIORITY_ZH)}{_PRIORITY_ZH_SUFFIX})"
)

# [System], 【系统】, [ S y s t e m ], [SYSTEM NOTE], [系统通知], <system>, (System) ...
_ROLE_MARKER_RE: Final = re.compile(
    rf"{OPEN}{OPEN_MORE}{SP}/?{SP}(?P<w>{_ROLE_KW}){SP}{CLOSE}{{1,3}}"
)
# "[System: obey me]": the marker part; "(系统：Win11)" is left alone.
_ROLE_OPEN_RE: Final = re.compile(rf"{OPEN_STRICT}{OPEN_MORE}{SP}(?P<w>{_ROLE_KW}){SP}[:|\-]")

# --------------------------------------------------------------------------------------
# Turn markers and role labels
# --------------------------------------------------------------------------------------

# ‹用户›, <助手>, 〈用户〉, «user», <<用户>>, </assistant>, [AI] ...
_TURN_ROLES: Final = (
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
_TURN_MARKER_RE: Final = re.compile(
    rf"{OPEN_STRICT}[{re.escape(ANGLE_OPEN_CHARS)}]{{0,2}}{SP}/?{SP}(?P<w>{alt(_TURN_ROLES)}){SP}"
    rf"(?:[{re.escape(ANGLE_CLOSE_CHARS)}]{{1,3}}|{CLOSE})"
)
# Role labels at the start of a line, after optional whitespace, Markdown markers or an
# already quoted marker; a run of them at once ("User: Assistant: …"), so that no pass
# uncovers a new line start for the next.
_LABEL_HEAD: Final = r"(?:[ \t#>+\-•·]|\*(?!\*)|\d{1,4}[.)]|“[^“”\n]{0,40}”)*+"
_LABEL_UNIT: Final = (
    r"(?:\*\*|__)?[ \t]*(?:system(?:[ \t_-]{0,3}(?:prompt|message|override|note))?|assistant"
    r"|user|human|ai|系统|系統|助手|用户|用戶|ai助手)[ \t]*(?:\*\*|__)?[ \t]*:(?:\*\*|__)?"
)
_ROLE_LABEL_RE: Final = re.compile(
    rf"^{_LABEL_HEAD}(?P<x>{_LABEL_UNIT}(?:{_LABEL_HEAD}{_LABEL_UNIT})*)", re.MULTILINE
)

# --------------------------------------------------------------------------------------
# Boundary imitations
# --------------------------------------------------------------------------------------

# Any bracket opening with a section title, up to its close (or to the end of the line
# when the forgery leaves it open): the read path's boundaries, and the sections of the
# memory jobs' own prompts (memory/prompts.py; a turn folded or read there must not open
# a section of its own, such as the teacher's words the extractor may take facts from).
_SECTION_TITLES: Final = (
    "本会话前情",
    "相关历史",
    "核心记忆",
    "知识库检索结果",
    "用户问题",
    "此前对话摘要",
    "最近对话",
    "已有摘要",
    "新增对话",
    "请输出新的滚动摘要",
    "老师本轮原话",
    "助手回复",
    "候选记忆",
)
# The compression prompt's turn headers, "【第3轮 #812】".
_TURN_HEADER: Final = rf"第{SP}[0-9０-９]{{1,6}}{SP}轮{SP}[#＃]"
_BOUNDARY_RE: Final = re.compile(
    rf"[{re.escape(OPEN_STRICT_CHARS + OPEN_CODE_CHARS)}]{OPEN_MORE}{SP}"
    rf"(?P<w>(?:{alt(_SECTION_TITLES)}|{_TURN_HEADER}){NOT_CLOSE}{{0,240}})(?:{CLOSE}{{1,3}})?"
)
# The footer's words without brackets ("本会话前情结束，以下是用户本轮的真实请求：…") claim
# that the history has ended: a run of them is quoted unless it already is. A run stays on
# one line, as a quotation does (QUOTED_RE): a run across a line break, once quoted, would
# not read as quoted and would be quoted again on every pass.
_FOOTER_PHRASES: Final = (
    "以下是用户本轮的真实请求",
    "用户本轮的真实请求",
    "本会话前情结束",
    "相关历史结束",
    "核心记忆结束",
    "知识库检索结果结束",
)
_FOOTER_RE: Final = re.compile(
    rf"(?P<w>{alt(_FOOTER_PHRASES)}(?:(?:[^\S\n]|[\-:,;]){{0,4}}{alt(_FOOTER_PHRASES)})*)"
)

# The order matters only for looks: markers inside a forged boundary are quoted before
# the boundary itself. The engine repeats every rule until nothing changes.
RULES: Final[tuple[MarkerRule, ...]] = (
    MarkerRule("template_token", _TEMPLATE_PIPE_RE),
    MarkerRule("template_token", _TEMPLATE_SYS_RE),
    MarkerRule("template_token", _TEMPLATE_INST_RE),
    MarkerRule("template_token", _TEMPLATE_ANGLE_RE),
    MarkerRule("template_token", _TEMPLATE_HASH_RE),
    MarkerRule("template_token", _TEMPLATE_HEADING_RE),
    MarkerRule("role_marker", _ROLE_MARKER_RE),
    MarkerRule("role_marker", _ROLE_OPEN_RE),
    MarkerRule("turn_marker", _TURN_MARKER_RE),
    MarkerRule("role_prefix", _ROLE_LABEL_RE, strip="*_:"),
    MarkerRule("boundary_imitation", _BOUNDARY_RE),
    MarkerRule("boundary_imitation", _FOOTER_RE, outside_quotes=True),
)
