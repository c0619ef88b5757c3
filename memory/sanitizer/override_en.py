"""English instruction-override phrases: detected and reported, never removed.

"Ignore all previous instructions", "you are now DAN", "reveal your system prompt":
flagged (:attr:`SanitizeResult.flagged`) and kept, like the Chinese ones
(:mod:`memory.sanitizer.override_zh`), because the same words are how a teacher says
"ignore my previous message, the quiz is on Thursday".
"""

from __future__ import annotations

import re
from typing import Final

from memory.sanitizer.patterns import literal_heads, tail, words

_EN_TAIL = tail(",;!?。\n.")

_S = r"\s{1,8}"
# Positional qualifiers point at earlier text; determiners only quantify.
_EN_POS = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system"
    r"|aforementioned|above-mentioned|old|existing|given)"
)
_EN_DET = r"(?:all|any|every|your)"
_EN_STRONG = (
    r"(?:instructions?|prompts?|rules|directions|directives?|guidelines|commands?|constraints"
    r"|restrictions|programming|guidance|orders|polic(?:y|ies)|safeguards|filters|training)"
)
_EN_WEAK = r"(?:context|messages?|text|conversation|tasks?|requests?|questions?|content|input)"
# ignore all instructions / ignore all of the previous rules / disregard your guidelines /
# ignore the previous two instructions / forget the above text
# (but not "ignore any spelling errors in the text")
_EN_OBJECT = (
    rf"{_S}(?:(?:the|of|these|those|my){_S}){{0,3}}(?:"
    rf"{_EN_DET}{_S}(?:of{_S})?(?:the{_S})?(?:{_EN_POS}{_S})?(?:{_EN_STRONG}|{_EN_WEAK})"
    rf"|{_EN_POS}(?:{_S}[\w'-]{{1,30}}){{0,3}}?{_S}{_EN_STRONG}"
    rf"|{_EN_POS}{_S}{_EN_WEAK})\b{_EN_TAIL}"
)
# ignore the above / forget everything above / disregard all of the previous
_EN_ABOVE = (
    rf"{_S}(?:(?:all|everything){_S}(?:of{_S})?)?(?:the{_S})?(?:above|previous|foregoing"
    rf"|everything{_S}(?:above|before|else|you{_S}(?:were|have{_S}been){_S}told))\b{_EN_TAIL}"
)
_IGNORE_EN_RES = literal_heads(
    *words(
        (
            "ignore",
            "disregard",
            "forget",
            "override",
            "bypass",
            "neglect",
            "discard",
            "abandon",
            "overlook",
        ),
        _EN_OBJECT,
    ),
    ("set", rf"{_S}aside{_EN_OBJECT}"),
    ("pay", rf"{_S}no{_S}attention{_S}to{_EN_OBJECT}"),
    ("do", rf"{_S}not{_S}(?:follow|obey){_EN_OBJECT}"),
    ("don", rf"['’]?t{_S}(?:follow|obey){_EN_OBJECT}"),
    ("stop", rf"{_S}following{_EN_OBJECT}"),
    *words(("ignore", "disregard", "forget"), _EN_ABOVE),
)
_ROLE_EN_RES = literal_heads(
    (
        "you",
        rf"{_S}are{_S}now{_S}(?:(?:an?{_S})?(?:ai|assistant|bot|chatbot|language{_S}model"
        rf"|unrestricted|unfiltered|uncensored|jailbroken|evil|dan)|free{_S}(?:from|of)|no{_S}longer"
        rf"|in{_S}(?:developer|dan|god|jailbreak){_S}mode|going{_S}to{_S}(?:act|ignore|pretend)"
        rf"|acting{_S}as|operating{_S}as|called|named)\b{_EN_TAIL}",
    ),
    (
        "from",
        rf"{_S}now{_S}on,?{_S}(?:you{_S}(?:are|will{_S}(?:be|act|ignore|only|respond|answer|reply"
        rf"|pretend)|must{_S}(?:ignore|act|only|respond|answer|reply|obey)|act|ignore|respond"
        rf"|answer|reply|pretend|have{_S}no|no{_S}longer|can{_S}do)|your{_S}(?:new|only|real"
        rf"|true){_S}(?:instructions?|task|role|rules?|goal|name))\b{_EN_TAIL}",
    ),
    *words(
        ("new", "updated", "revised", "real", "actual", "true"),
        rf"{_S}(?:instructions?|task|rules|directives?|system{_S}prompt|orders)\s{{0,8}}:"
        rf"{_EN_TAIL}",
    ),
    *words(
        ("reveal", "print", "show", "repeat", "output", "display", "leak"),
        rf"{_S}(?:me{_S})?(?:your|the){_S}system\s{{0,8}}prompt\b{_EN_TAIL}",
    ),
    ("tell", rf"{_S}me{_S}(?:your|the){_S}system\s{{0,8}}prompt\b{_EN_TAIL}"),
    ("give", rf"{_S}me{_S}(?:your|the){_S}system\s{{0,8}}prompt\b{_EN_TAIL}"),
    ("what", rf"{_S}is{_S}(?:your|the){_S}system\s{{0,8}}prompt\b{_EN_TAIL}"),
    ("system", rf"\s{{0,8}}prompt\b{_EN_TAIL}"),
    *words(("developer", "dan", "jailbreak", "god"), rf"{_S}mode\b{_EN_TAIL}"),
    ("do", rf"{_S}anything{_S}now\b{_EN_TAIL}"),
    ("act", rf"{_S}as{_S}(?:an?{_S})?(?:unrestricted|unfiltered|jailbroken|dan)\b{_EN_TAIL}"),
)


# (rule name, pattern): the names are reported in SanitizeResult.flagged.
RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    *(("override_ignore_en", pattern) for pattern in _IGNORE_EN_RES),
    *(("override_role_en", pattern) for pattern in _ROLE_EN_RES),
)
