"""Regression tables for the eighth red-line round: results in more of the words used.

* A qualitative grade after 考了个 (考了个良), full marks not reached (拿不到满分), a score
  at the line (总分刚好压线), points taken off (被扣了好多分), a result that only just
  passed closing its clause (四百三，刚过).
* 满分 after a result gives its scale (只得了九分（满分十五）), not a paper's; any other
  spec word still vetoes, and 满分 before the result still does.
* A class before a standing word (全班垫底) is where the pupil stands, not the subject.
* Cousins and siblings (我堂弟, 我表姐) are kin; 小 or 阿 cut from a surname by the
  segmenter (小 + 冯 最近…) is a pet name; an exam of a school career (中考, 补考)
  places a dictionary name in school life.

Every sentence here is new (written for these tests, not copied from a labelled set).
Each table is checked on both scan paths (``scan``, cold and warm; ``explain``) and in
full-width and zero-width forms.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.redline import Category
from tests.memory.test_redline import assert_decided, disguised

RESULT_WORDS = [
    ("高子轩这次只考了个中，回家不敢说", Category.GRADE, True),
    ("戴雨晴的化学期末考了个优", Category.GRADE, True),
    ("请把评价等级分为优、良、中、差四档", Category.GRADE, False),
    ("蒋文昊的听写总是差一点拿不到满分", Category.GRADE, True),
    ("这份试卷太难，全班没有一个人考到满分", Category.GRADE, False),
    ("崔浩然的中考总分刚好压线，差点没进一中", Category.GRADE, True),
    ("写字时不要压线，字要写在格子中间", Category.GRADE, False),
    ("小明写作文总是压线", Category.GRADE, False),
    ("龙思琪的作文又被扣了好多分", Category.GRADE, True),
    ("作文跑题扣10分，字数不足扣5分", Category.GRADE, False),
    ("俞佳怡的六级成绩出来了，四百三，刚过", Category.GRADE, True),
    ("春节刚过，学生们陆续返校", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), RESULT_WORDS)
def test_results_in_more_words(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


SCALES = [
    ("石磊的英语作文只得了九分（满分十五）", Category.GRADE, True),
    ("本题满分12分，答对一个要点得3分", Category.GRADE, False),
    ("试卷满分150分，考试时间120分钟", Category.GRADE, False),
    ("请统计一下，满分的同学有几个", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), SCALES)
def test_full_marks_after_a_result_is_its_scale(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


STANDING = [
    ("蔡一凡期中物理全班垫底", Category.GRADE, True),
    ("我们班这次平均分全年级垫底", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), STANDING)
def test_a_class_before_a_standing_word_is_where_the_pupil_stands(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


PEOPLE = [
    ("我堂弟数学又不及格", Category.GRADE, True),
    ("我表姐下周做手术", Category.HEALTH, True),
    ("小冯最近查出来有乙肝", Category.HEALTH, True),
    ("小学最近要体检", Category.HEALTH, False),
    ("鲁迅在《藤野先生》里写到他的解剖学笔记", Category.HEALTH, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), PEOPLE)
def test_kin_pet_names_and_school_careers(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


_ROWS = RESULT_WORDS + SCALES + STANDING + PEOPLE


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), row=st.sampled_from(_ROWS), wide=st.booleans())
def test_full_width_and_zero_width_forms_decide_alike_on_both_paths(
    data: st.DataObject, row: tuple[str, Category, bool], wide: bool
) -> None:
    text, category, blocked = row
    typed = disguised(data, text, wide=wide)
    assert_decided(typed, category, blocked)
