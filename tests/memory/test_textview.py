"""The shared text view: tables of what folds and what vanishes, and properties of the map."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import textview
from memory.factkey import fact_key, near_equal
from memory.sanitizer.engine import detection_view
from memory.textview import fold, is_invisible, strip_invisible, text_view, unify_line_breaks

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u034f\u180e"
BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c"
OTHER_INVISIBLE = "\u115f\u1160\u3164\uffa0\u17b4\u17b5\ufe0f\U000e0041\U000e0100\U0001d173"
INVISIBLE = ZERO_WIDTH + BIDI + OTHER_INVISIBLE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain ascii", "plain ascii"),
        ("李华数学考了58分。", "李华数学考了58分。"),
        ("１３８００１３８０００", "13800138000"),  # full-width digits
        ("ＳＹＳＴＥＭ", "SYSTEM"),
        ("身\u200b份\u200d证", "身份证"),
        ("他，她；我！？：", "他,她;我!?:"),  # full-width punctuation folds
        ("138\u2014 0013\u20138000", "138- 0013-8000"),
        ("a\r\nb\rc\u2028d\u0085e", "a\nb\nc\nd\ne"),
        ("①②⑩", "1210"),
        ("ﬁle", "file"),
        ("\u3000空格", " 空格"),
        ("Ｇ１１０", "G110"),
        ("\U000e0049\U000e0047", ""),  # Unicode tags
    ],
)
def test_view_table(text: str, expected: str) -> None:
    assert text_view(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SYSTEM", "system"),
        ("ＳＹＳＴＥＭ", "system"),
        ("İstanbul", "istanbul"),  # one character stays one character
        ("Tom和LILY", "tom和lily"),
        ("㎁", "na"),  # NFKC can produce upper case; folded after
    ],
)
def test_case_folding_table(text: str, expected: str) -> None:
    assert text_view(text, fold_case=True).text == expected
    assert fold(text) == expected


def test_dashes_can_be_kept() -> None:
    assert text_view("a—b", dashes=False).text == "a—b"
    assert text_view("a—b").text == "a-b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[Ѕуѕtеm]", "[system]"),  # Cyrillic DZE, U, DZE, IE
        ("ЅҮЅТЕМ ΝОТЕ", "system note"),  # capitals: Cyrillic TE and Greek NU fold as written
        ("ІΝЅТRUCТІОΝ", "instruction"),  # TR39's prototype of І is "l"; a capital reads I
        ("Sÿstém", "system"),  # diacritics on a Latin letter
        ("ｓｙｓｔｅｍ", "system"),
        ("Россия", "poccия"),  # Cyrillic Р, о, с are look-alikes; и, я are not
        ("李华数学考了58分。", "李华数学考了58分。"),
        ("①İ", "1i"),
    ],
)
def test_look_alike_letters_fold_when_asked(text: str, expected: str) -> None:
    assert text_view(text, fold_case=True, confusables=True).text == expected


def test_look_alikes_are_off_by_default() -> None:
    # The red line and fact keys keep their view: Cyrillic stays Cyrillic there.
    assert text_view("Ѕуѕtеm").text == "Ѕуѕtеm"
    assert fold("Ѕуѕtеm") == "ѕуѕtеm"
    assert text_view("Ѕуѕtеm", confusables=True).text == "System"


def test_emoji_keep_their_joiners_when_asked() -> None:
    text = "谢谢老师❤️ 👨\u200d👩\u200d👧 1️⃣ 👍🏻"
    assert strip_invisible(text, keep_emoji_joiners=True) == text
    assert strip_invisible(text) == "谢谢老师❤ 👨👩👧 1⃣ 👍🏻"
    # Between letters they are still removed: they could split a word.
    assert strip_invisible("Sys\u200dtem\ufe0f", keep_emoji_joiners=True) == "System"
    assert strip_invisible("❤\u200b\u200d", keep_emoji_joiners=True) == "❤"


def test_line_breaks_are_unified() -> None:
    assert unify_line_breaks("一\r\n二\r三\u2028四\u0085五\u2029") == "一\n二\n三\n四\n五\n"
    assert unify_line_breaks("no breaks") == "no breaks"


@pytest.mark.parametrize("ch", INVISIBLE)
def test_invisible_characters_vanish(ch: str) -> None:
    assert is_invisible(ch)
    assert text_view(f"身{ch}份证").text == "身份证"
    assert strip_invisible(f"a{ch}b") == "ab"


def test_every_format_character_is_listed() -> None:
    # The regex is what the fast strip uses; every Cf of this Python's Unicode is in it.
    cf = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    missing = [hex(ord(ch)) for ch in cf if not textview.INVISIBLE_RE.fullmatch(ch)]
    assert missing == []


def test_union_of_the_former_invisible_sets() -> None:
    # What sanitizer, red line and fact keys each dropped before they shared this view.
    former = (
        "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180f\u200b\u200f\u202a\u202e"
        "\u2060\u206f\u3164\ufe00\ufe0f\ufeff\uffa0\U000e0000\U000e007f\U000e0100\U000e01ef"
        "\u0600\u0605\u06dd\u070f\u0890\u0891\u08e2\ufff9\ufffb\U000110bd\U000110cd"
        "\U00013430\U0001343f\U0001bca0\U0001bca3\U0001d173\U0001d17a\u2064\u2066\u2069"
    )
    assert [hex(ord(c)) for c in former if not is_invisible(c)] == []


def test_stable_characters_are_really_stable() -> None:
    # The fast path copies these unchanged: NFKC, dash and invisible rules must agree.
    stable = re.compile(f"[{textview._STABLE}]")
    for code in range(0x30000):
        ch = chr(code)
        if stable.fullmatch(ch):
            assert unicodedata.normalize("NFKC", ch) == ch, hex(code)
            assert textview._lookalike(ch) == ch or ch.isascii(), hex(code)
            assert not is_invisible(ch), hex(code)
            assert ch not in textview.DASHES, hex(code)
            assert ch not in "\r\u0085\u2028\u2029", hex(code)


def test_plain_text_is_the_identity() -> None:
    view = text_view("请帮我出一份数学试卷。Math test")
    assert view.identity
    assert view.span(2, 5) == (2, 5)


def test_offsets_map_back_to_the_source_characters() -> None:
    text = "电话\u200b１３８\r\n⑩号"
    view = text_view(text)
    assert view.text == "电话138\n10号"
    assert view.span(2, 5) == (3, 6)  # "138" came from the full-width digits
    assert view.span(5, 6) == (6, 8)  # the line break came from \r\n
    assert view.span(6, 7) == (8, 9)  # half of ⑩ maps to the whole ⑩
    assert view.span(6, 9) == (8, 10)


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------

_ALPHABET = st.sampled_from(
    list("abcXYZ 09李华数学考分，。：；！？\r\n—–-Ａ１２ｚ①⑩ﬁİ㎁\u3000")
    + list(INVISIBLE)
    + ["\r\n"]
)
_texts = st.lists(_ALPHABET, max_size=40).map("".join) | st.text(max_size=40)
_FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(text=_texts, fold_case=st.booleans(), confusables=st.booleans(), data=st.data())
def test_every_view_span_maps_inside_the_original(
    text: str, fold_case: bool, confusables: bool, data: st.DataObject
) -> None:
    view = text_view(text, fold_case=fold_case, confusables=confusables)
    n = len(view.text)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    lo, hi = view.span(start, end)
    assert 0 <= lo <= hi <= len(text)
    if end > start:
        assert hi > lo
        # The mapped original span, viewed on its own, holds the view span.
        alone = text_view(text[lo:hi], fold_case=fold_case, confusables=confusables)
        assert view.text[start:end] in alone.text


@_FAST
@given(text=_texts)
def test_offsets_are_monotonic(text: str) -> None:
    view = text_view(text)
    offsets = [view.offset(i) for i in range(len(view.text) + 1)]
    assert offsets == sorted(offsets)
    assert offsets[-1] == len(text)


@_FAST
@given(text=_texts, at=st.integers(0, 40), ch=st.sampled_from(INVISIBLE))
def test_a_zero_width_character_anywhere_changes_nothing(text: str, at: int, ch: str) -> None:
    at = min(at, len(text))
    if text[at - 1 : at] == "\r" and text[at : at + 1] == "\n":
        return  # splitting \r\n makes two line breaks, which is a visible change
    assert text_view(text[:at] + ch + text[at:]).text == text_view(text).text


@_FAST
@given(text=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30))
def test_full_width_forms_fold_to_ascii(text: str) -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) for c in text)
    assert text_view(wide).text == text
    assert text_view(wide, fold_case=True).text == text.lower()


@_FAST
@given(text=_texts, confusables=st.booleans())
def test_view_is_idempotent(text: str, confusables: bool) -> None:
    once = text_view(text, fold_case=True, confusables=confusables).text
    assert text_view(once, fold_case=True, confusables=confusables).text == once


@_FAST
@given(
    at=st.integers(0, 12),
    ch=st.sampled_from(INVISIBLE),
    fact=st.sampled_from(["老师教八年级数学", "偏好人教版教材", "Uses the PEP textbook"]),
)
def test_fact_keys_see_the_same_view(at: int, ch: str, fact: str) -> None:
    # Fact keys ignore every character the view drops, and fold full-width forms.
    assert fact_key(fact[:at] + ch + fact[at:]) == fact_key(fact)
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in fact)
    assert fact_key(wide) == fact_key(fact)
    assert near_equal(fact[:at] + ch + fact[at:], fact)


@_FAST
@given(text=_texts | st.text(st.characters(codec="utf-8"), max_size=60))
def test_the_sanitizer_sees_text_through_this_view(text: str) -> None:
    # One owner: the sanitizer's rules match on this module's view, with look-alikes.
    ours = text_view(text, fold_case=True, confusables=True)
    assert detection_view(text) == ours
    # Folding look-alikes only ever changes letters into ASCII letters.
    plain = text_view(text, fold_case=True)
    assert len(plain.text) == len(ours.text)
    for a, b in zip(plain.text, ours.text, strict=True):
        assert a == b or (b.isascii() and b.isalpha())


# Few distinct characters to fold, some of them with views longer than one character.
_FEW = "李华，。…﹏㈠ｶカ\u200bＡa\u2014"


@_FAST
@given(
    text=_texts | st.lists(st.sampled_from(list(_FEW)), max_size=40).map("".join),
    fold_case=st.booleans(),
    confusables=st.booleans(),
)
def test_the_replace_fast_path_builds_the_same_view(
    text: str, fold_case: bool, confusables: bool
) -> None:
    # With few distinct characters to fold, the view is built by str.replace; the same
    # text through the per-run path (fast path off) gives the same view and the same map.
    fast = text_view(text, fold_case=fold_case, confusables=confusables)
    limit = textview._FAST_DISTINCT
    setattr(textview, "_FAST_DISTINCT", -1)  # noqa: B010 - a Final of the module
    try:
        slow = text_view(text, fold_case=fold_case, confusables=confusables)
    finally:
        setattr(textview, "_FAST_DISTINCT", limit)  # noqa: B010
    assert fast.text == slow.text
    assert [fast.offset(i) for i in range(len(fast.text) + 1)] == [
        slow.offset(i) for i in range(len(slow.text) + 1)
    ]
    assert fast.span(0, len(fast.text)) == slow.span(0, len(slow.text))


def test_the_map_of_a_fast_view_is_worked_out_on_first_use() -> None:
    # The fast path defers the events of its longer views (… is "...") until a span is
    # mapped back; before and after, the view answers alike.
    text = "老师……好，Ａ\u200b1"
    view = text_view(text)
    assert view.text == "老师......好,A1"
    assert not view.identity
    first = [view.offset(i) for i in range(len(view.text) + 1)]
    assert first == [0, 1, 2, 2, 2, 3, 3, 3, 4, 5, 6, 8, 9]
    assert [view.offset(i) for i in range(len(view.text) + 1)] == first
    assert view.span(2, 8) == (2, 4)  # the two ellipses, whole
    assert view.span(10, 12) == (6, 9)  # "A1": the zero-width space between comes along
    assert not view.identity
