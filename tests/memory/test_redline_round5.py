"""Regression tables for the mechanisms of the fifth red-line round (one table each), a
property for the trigger pass's sentence delimiting, and the same full-width and
zero-width property as the fourth round's tests over these tables.

Every sentence here is new (written for these tests, not copied from a development set).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.redline import Category, engine
from memory.redline.base import Doc
from memory.textview import text_view
from tests.memory.test_redline import disguised
from tests.memory.test_redline_mechanisms import _categories

# A vocabulary match the segmenter's words cut through at its end is no word of the
# sentence (看看病句: 看病 + 句); a name the segmenter joined to the next word is no cut.
CUT_THROUGH = [
    ("帮我看看病句练习的答案对不对", False),
    ("这篇作文我再看看病句多不多", False),
    ("黎思远去医院拔了牙", True),  # (the segmenter cuts 黎思 + 远去)
    ("周可欣去医院看病了", True),
    ("孙一诺有哮喘病，跑步别太快", True),  # the word holds the whole term
]


@pytest.mark.parametrize(("text", "blocked"), CUT_THROUGH)
def test_a_term_the_segmenter_cuts_through_is_no_term(text: str, blocked: bool) -> None:
    assert (Category.HEALTH in _categories(text)) is blocked


# Children in general (现在的孩子, 许多学生) and the object of advice (留意孩子的视力) are
# nobody in particular; a parent's own child or a pointed-at one still is someone.
GENERIC_CHILDREN = [
    ("现在的孩子过敏的越来越多了", False),
    ("如今的学生近视的比例太高", False),
    ("许多学生考前都会失眠", False),
    ("平时多留意孩子的视力，发现异常要去医院", False),
    ("我家孩子最近一直失眠", True),
    ("那个孩子有癫痫，发作时别慌", True),
    ("孩子现在还在发烧，明天请假", True),
]


@pytest.mark.parametrize(("text", "blocked"), GENERIC_CHILDREN)
def test_children_in_general_are_nobody_in_particular(text: str, blocked: bool) -> None:
    assert (Category.HEALTH in _categories(text)) is blocked


# A notice to all parents (家长们, 各位家长) is about nobody; a pupil named in it is.
NOTICES_TO_PARENTS = [
    ("家长们注意：这次期中不排名，只发成绩条", False),
    ("各位家长：月考排名下周公布", False),
    ("各位家长：王浩然这次月考排名退了十名", True),
    ("家长们好，李佳怡期末数学不及格，需要补考", True),
]


@pytest.mark.parametrize(("text", "blocked"), NOTICES_TO_PARENTS)
def test_a_notice_to_all_parents_is_about_nobody(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


_ROWS = [(t, b, Category.HEALTH) for t, b in CUT_THROUGH + GENERIC_CHILDREN] + [
    (t, b, Category.GRADE) for t, b in NOTICES_TO_PARENTS
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), row=st.sampled_from(_ROWS), wide=st.booleans())
def test_full_width_and_zero_width_forms_decide_alike(
    data: st.DataObject, row: tuple[str, bool, Category], wide: bool
) -> None:
    text, blocked, category = row
    typed = disguised(data, text, wide=wide)
    assert (category in _categories(typed)) is blocked


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(
        st.sampled_from(
            [
                *"考了分5 3.。\n\r!?;．。！？；满分期末李华住院过敏成绩A",
                "\u200b",
                "\ufeff",
                "１",
                "２",
            ]
        ),
        max_size=70,
    )
)
def test_the_delimiters_of_the_trigger_pass_are_the_sentence_delimiters(text: str) -> None:
    # The automaton's delimiter characters (a full stop between two digits is a decimal
    # point) mark the same sentences as the regex searches, in any typed form.
    view = text_view(text).text
    threshold = engine._DELIMIT_ALL_FROM
    try:
        engine._DELIMIT_ALL_FROM = 0
        engine.clear_sentence_cache()
        found = engine._triggered(Doc(view))
        engine._DELIMIT_ALL_FROM = 10**9
        engine.clear_sentence_cache()
        searched = engine._triggered(Doc(view))
    finally:
        engine._DELIMIT_ALL_FROM = threshold
    assert found == searched
    doc = Doc(view)
    for lo, hi in found:
        assert doc.sentence(lo) == (lo, hi)  # as Doc.sentence delimits them
