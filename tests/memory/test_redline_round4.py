"""Regression tables for the mechanisms of the fourth red-line round (one table each),
and properties: every positive stays blocked (and every negative passes) whatever
full-width forms and zero-width characters it is typed with.

Every sentence here is new (written for these tests, not copied from a development set).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.redline import Category
from tests.memory.test_redline import disguised
from tests.memory.test_redline_mechanisms import _categories, _names


# Pet names: 阿X / 小X tagged a numeral for its second character (阿月, 小月), and a
# doubled name the segmenter cut into two characters (暖 + 暖).
@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("阿月近视得厉害", "阿月"),
        ("小月这次英语挂了", "小月"),
        ("暖暖今天发烧了", "暖暖"),
    ],
)
def test_pet_names_the_segmenter_mistags_or_cuts(sentence: str, name: str) -> None:
    assert (name, "nickname") in _names(sentence)


@pytest.mark.parametrize("sentence", ["谢谢老师", "小时候的事", "常常迟到的问题"])
def test_grammar_words_are_no_pet_name(sentence: str) -> None:
    assert not [n for n, kind in _names(sentence) if kind == "nickname"]


PASS_FAIL = [
    ("Lily 的 math quiz 又 fail 了", True),
    ("冯子健这次化学不几格", True),
    ("阿宝期末物理没极格，得补", True),
    ("如果 fail 了这门课要重修吗", False),  # a hypothesis
    ("这次不几个人参加", False),
]


@pytest.mark.parametrize(("text", "blocked"), PASS_FAIL)
def test_fail_in_english_and_typos_of_jige(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


BARE_AND_TIME = [
    ("彭一帆单元测 57，要加油", True),
    ("单元测 20 道题，每题 5 分", False),  # a paper's items
    ("考试前一晚早点睡，别熬夜", False),  # 前 + numeral + a time word is no rank
    ("比赛前两天要注意休息", False),
    ("她这次排在年级前二十", True),
]


@pytest.mark.parametrize(("text", "blocked"), BARE_AND_TIME)
def test_unit_tests_and_time_after_qian(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


TRANSCRIPTS = [
    ("宁浩的期末报告册请家长签字后交回", True),  # someone's report card to sign
    ("期末报告册请家长签字后交回", False),  # a notice to everyone
    ("Parents, report cards go home on Friday.", False),  # plural: everyone's
    ("Could you send me Amy's report card?", True),
]


@pytest.mark.parametrize(("text", "blocked"), TRANSCRIPTS)
def test_possessed_transcripts_and_plural_ones(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


HEALTH_CUES = [
    ("乐乐体温38度2，先回家休息", True),
    ("体温三十八度多的孩子请在家休息", False),  # a relative clause to a group
    ("Ben 昨天摔了一跤，门牙磕掉了", True),
    ("舟舟下午去看牙医，请假两节课", True),
    ("阿拉囡囡发寒热了，今天不来了", True),
    ("作文素材：张海迪高位截瘫，自学成才", False),  # a public figure as material
    ("我们学校有个看病的流程图，帮我美化一下", False),
]


@pytest.mark.parametrize(("text", "blocked"), HEALTH_CUES)
def test_temperature_doctor_visits_teeth_and_dialect_fever(text: str, blocked: bool) -> None:
    assert (Category.HEALTH in _categories(text)) is blocked


_ROWS = [(t, b, Category.GRADE) for t, b in PASS_FAIL + BARE_AND_TIME + TRANSCRIPTS] + [
    (t, b, Category.HEALTH) for t, b in HEALTH_CUES
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), row=st.sampled_from(_ROWS), wide=st.booleans())
def test_full_width_and_zero_width_forms_decide_alike(
    data: st.DataObject, row: tuple[str, bool, Category], wide: bool
) -> None:
    text, blocked, category = row
    typed = disguised(data, text, wide=wide)
    assert (category in _categories(typed)) is blocked
