"""Regression table for the ninth red-line round: a name split into ordinary words.

The segmenter sometimes cuts a full name into a surname it reads as a word (谢 v, 张 q,
程 n) and a given name that is itself a dictionary word (欣然 d, 浩然 a). At the head of
a clause, a character that opens many names in the segmenter's own dictionary
(``memory/redline/data/surname_chars.txt``, built by
``benchmarks/data/build_surname_chars.py``) followed by such a word, and then by what
follows a subject, is a name. Grammar at the head (从, 和, 向) and role words after it
(王老师, 李同学 are titles of a role, not a pupil) are not.

After a singular classifier (那个, 这位), a seat in a role noun's modifier (坐最后一排的,
第三组的) is where the pupil sits, not a count; without one (这一排的学生) it is a group.

Every sentence here is new (written for these tests, not copied from a labelled set).
"""

from __future__ import annotations

import pytest

from memory.redline import Category
from memory.redline.persons import _SURNAME_CHARS
from tests.memory.test_redline import assert_decided

SPLIT_NAMES = [
    ("谢浩然这次月考数学只有六十出头", Category.GRADE, True),
    ("张欣然上学期物理挂了", Category.GRADE, True),
    ("程欣然的英语期末考了个差", Category.GRADE, True),
    ("罗浩然最近总说头疼，医生说要复查", Category.HEALTH, True),
    ("从前天开始，数学作业按小组收", Category.GRADE, False),
    ("王老师这次月考出的题目偏难", Category.GRADE, False),
    ("谢谢老师这次帮忙整理成绩单模板", Category.GRADE, False),
    ("程序设计这次期末考试改为上机考", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), SPLIT_NAMES)
def test_a_name_split_into_ordinary_words(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


def test_the_surname_statistic_keeps_names_and_drops_words() -> None:
    assert {"王", "张", "谢", "程", "罗"} <= _SURNAME_CHARS
    assert not {"大", "有", "的", "是", "一"} & _SURNAME_CHARS


SEATS = [
    ("这个坐第一排的男生这次月考物理只有四十分", Category.GRADE, True),
    ("那位第二组的女生最近总咳嗽，医生说是支气管炎", Category.HEALTH, True),
    ("这一排的学生这次数学考得不好", Category.GRADE, False),
    ("这个月三个学生数学不及格，要开家长会", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), SEATS)
def test_a_seat_inside_a_singular_role_noun(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)
