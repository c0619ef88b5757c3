"""Finding a text to forget as every module sees text (memory/textmatch.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.textmatch import PLACEHOLDER, TextMatcher

NAME = "王小明"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("王小明考了第一", f"{PLACEHOLDER}考了第一"),
        ("王\u200b小明", PLACEHOLDER),  # zero-width space
        ("王\u2060小\ufeff明", PLACEHOLDER),  # word joiner, BOM
        ("王 小\n明同学", f"{PLACEHOLDER}同学"),  # spaces and a line break inside
        ("和王小明、王小明", f"和{PLACEHOLDER}、{PLACEHOLDER}"),
        ("王小", "王小"),
        ("王晓明", "王晓明"),
        ("", ""),
    ],
)
def test_chinese_mentions(text: str, redacted: str) -> None:
    assert TextMatcher(NAME).redact(text)[0] == redacted


@pytest.mark.parametrize(
    ("needle", "text", "redacted"),
    [
        ("Wang", "Dear ＷＡＮＧ,", f"Dear {PLACEHOLDER},"),  # full-width, any case
        ("wang xiao", "WangXiao and wang  xiao", f"{PLACEHOLDER} and {PLACEHOLDER}"),
        ("１３８００１３８０００", "电话13800138000", f"电话{PLACEHOLDER}"),  # full-width digits
        ("G110105", "学籍号ｇ110105号", f"学籍号{PLACEHOLDER}号"),
        ("a.b", "axb a.b", f"axb {PLACEHOLDER}"),  # no regex meaning
    ],
)
def test_forms_that_look_alike_are_the_same_mention(needle: str, text: str, redacted: str) -> None:
    assert TextMatcher(needle).redact(text)[0] == redacted


@pytest.mark.parametrize("needle", ["", " ", "王", "\u200b王\u200b", "a", "长" * 201])
def test_needles_too_short_or_too_long_are_refused(needle: str) -> None:
    with pytest.raises(ValueError):
        TextMatcher(needle)


INVISIBLE = st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", ""])
FILLER = st.text(alphabet=st.sampled_from("的了是在和我你他，。 abc123\n"), max_size=20)


@given(before=FILLER, after=FILLER, splits=st.lists(INVISIBLE, min_size=2, max_size=2))
def test_a_mention_hidden_with_invisible_characters_is_always_found(
    before: str, after: str, splits: list[str]
) -> None:
    hidden = f"王{splits[0]}小{splits[1]}明"
    text = f"{before}{hidden}{after}"
    matcher = TextMatcher(NAME)
    redacted, count = matcher.redact(text)
    assert count >= 1
    assert not matcher.matches(redacted)
    assert redacted.startswith(before) or NAME[0] in before


@given(text=st.text(max_size=60))
def test_redaction_leaves_no_mention_and_is_idempotent(text: str) -> None:
    matcher = TextMatcher(NAME)
    once, _ = matcher.redact(text)
    assert not matcher.matches(once)
    assert matcher.redact(once) == (once, 0)
