"""Regression tables for the seventh red-line round: who the statement is about.

* A distributive word with a unit (各班, 每组) is everyone of that kind: the segmenter's
  name model reads 各 or 每 as a surname, but such a word is never a pupil.
* A weak reference that reports what is said (心理老师说…, 医生认为…) is the source of the
  statement, not its subject: an identifiable person before it is what it is about.
* A given name the segmenter's model knows only by halves (王雨 + 萱) heads a clause as a
  name, as does a given name after a where-word (班上佳琪…).
* The people of a dialogue or a story being written (编一个小对话：Tom…) are characters.

Every sentence here is new (written for these tests, not copied from a labelled set).
Each table is checked on both scan paths (``scan``, cold and warm; ``explain``) and in
full-width and zero-width forms.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.redline import Category
from memory.redline.base import Doc
from memory.redline.persons import persons
from tests.memory.test_redline import assert_decided, disguised

COLLECTIVES = [
    ("体检下周三开始，各班按学号顺序到医务室排队", Category.HEALTH, False),
    ("每组派一个人去医务室领口罩", Category.HEALTH, False),
    ("邹明哲下午去医务室拿药", Category.HEALTH, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), COLLECTIVES)
def test_a_distributive_word_is_no_pupil(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


REPORTERS = [
    ("Max这几天上课老走神，心理老师说有点抑郁倾向", Category.HEALTH, True),
    ("Anna最近吃不下饭，校医说有点贫血", Category.HEALTH, True),
    ("心理老师说焦虑倾向在初三很常见", Category.HEALTH, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), REPORTERS)
def test_a_reporting_word_is_not_the_subject(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


HALF_READ_NAMES = [
    ("雨萱得了水痘，这周在家休息", Category.HEALTH, True),
    ("班上佳琪有哮喘，跑步要注意", Category.HEALTH, True),
    ("班上这次期末成绩普遍不错", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), HALF_READ_NAMES)
def test_a_given_name_read_by_halves_or_after_a_place_is_a_pupil(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


@pytest.mark.parametrize(
    ("sentence", "name"), [("雨萱得了水痘", "雨萱"), ("班上佳琪有哮喘", "佳琪")]
)
def test_half_read_and_placed_given_names_are_name_references(sentence: str, name: str) -> None:
    refs = persons(Doc(sentence), 0, len(sentence))
    assert (name, "name") in [(sentence[r.start : r.end], r.kind) for r in refs]


WRITTEN_CHARACTERS = [
    ("编一个小对话：Mike告诉爸爸他这次考试没考好，爸爸怎么鼓励他", Category.GRADE, False),
    ("写一段情景对话，Lucy跟同桌说她感冒了", Category.HEALTH, False),
    ("Write a short dialogue: Ben tells his mum he failed the test", Category.GRADE, False),
    ("Mike这次考试没考好，数学才五十分", Category.GRADE, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), WRITTEN_CHARACTERS)
def test_the_people_of_a_dialogue_being_written_are_characters(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


_ROWS = COLLECTIVES + REPORTERS + HALF_READ_NAMES + WRITTEN_CHARACTERS


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), row=st.sampled_from(_ROWS), wide=st.booleans())
def test_full_width_and_zero_width_forms_decide_alike_on_both_paths(
    data: st.DataObject, row: tuple[str, Category, bool], wide: bool
) -> None:
    text, category, blocked = row
    typed = disguised(data, text, wide=wide)
    assert_decided(typed, category, blocked)
