"""Regression tables for the mechanisms of the third red-line round (one table each).

Every sentence here is new (written for these tests, not copied from a development set):
each table holds the form a mechanism recognises and, where one exists, the look-alike
it must let pass.
"""

from __future__ import annotations

import pytest

from memory.redline import Category, scan
from memory.redline.base import Doc
from memory.redline.persons import persons


def _categories(text: str) -> set[Category]:
    return {h.category for h in scan(text)}


def _names(sentence: str) -> list[tuple[str, str]]:
    doc = Doc(sentence)
    return [(sentence[r.start : r.end], r.kind) for r in persons(doc, 0, len(sentence))]


# A name the segmenter splits into ordinary words (周一 + 鸣, 甘露 + 露, 纪子 + 昂), found at
# the head of a clause by its surname's dictionary tag and what follows a subject.
@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("周一鸣这次数学又没及格", "周一鸣"),
        ("甘露露上周发烧住院了", "甘露露"),
        ("纪子昂昨天拔了一颗牙", "纪子昂"),
        ("老师好，周一鸣有点感冒", "周一鸣"),
    ],
)
def test_a_name_split_by_the_segmenter_heads_its_clause(sentence: str, name: str) -> None:
    assert (name, "name") in _names(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "周一上午第二节课改成自习",
        "周一到周五都有晚自习",
        "马上就要期末考试了",
        "方法有很多种，大家自己选",
    ],
)
def test_ordinary_words_at_a_clause_head_are_no_name(sentence: str) -> None:
    assert not [n for n, kind in _names(sentence) if kind == "name"]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("周一鸣这次物理又没及格", Category.GRADE),
        ("甘露露这回英语只拿了五十八分", Category.GRADE),
        ("纪子昂上周做了阑尾切除", Category.HEALTH),
        ("周一鸣有色弱，看不清红绿", Category.HEALTH),
    ],
)
def test_split_names_carry_their_grades_and_health(text: str, category: Category) -> None:
    assert category in _categories(text)


def test_a_given_name_the_segmenter_could_not_place() -> None:
    # 司马 + 晓彤: the segmenter tags the given name "x", as it does punctuation.
    assert ("司马晓彤", "name") in _names("司马晓彤的腿摔伤了")


def test_a_preposition_and_a_time_word_tagged_as_a_name_are_no_name() -> None:
    assert not [n for n, kind in _names("不及格的同学请于本周六参加补考") if kind == "name"]
    assert Category.GRADE not in _categories("不及格的同学请于本周六上午参加补考。")


# Qualitative results without 成绩: a subject's foundation, a standing in class.
@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("那个插班生数学基础很差，计算老出错", True),
        ("我家姑娘在班上一直是中下游", True),
        ("穿蓝外套的那个男生英语成绩一直很拔尖", True),
        ("这本教辅的基础题很多，适合练手", False),
        ("长江中下游地区降水偏多", False),
    ],
)
def test_qualitative_results(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


# A class or a year before a superlative or a rank is the person's standing, not a group
# statistic; a class average stays a statistic.
@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("丁丁这次期中数学全班最高分", True),
        ("她这次语文全年级第三名", True),
        ("我们班这次数学平均分比二班高了三分", False),
        ("全班最高分是多少不重要，重点是分析错因", False),
    ],
)
def test_a_class_as_the_scope_of_a_rank(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("孩子的成绩单我已经看过了，数学有点偏科", True),
        ("学生的成绩单模板请用新版", False),
        ("成绩单什么时候发？", False),
    ],
)
def test_a_possessed_transcript_is_someones(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


def test_a_step_down_is_no_rubric() -> None:
    # 低了一档 is a result; 分档 and 档次 describe a rubric.
    assert Category.GRADE in _categories("Jack这学期writing拿了个C，比上学期低了一档。")
    assert Category.GRADE not in _categories("作文分档评分：A档45分以上，B档35到44分。")


# Health cues that need no diagnosis name.
@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("他一直在吃治失眠的药，白天总犯困", True),
        ("佳佳摔断了胳膊，打着石膏来上课", True),
        ("我闺女痛经很厉害，体育课能不能请假", True),
        ("王梓涵第一次来月经，有点害怕", True),
        ("药物学是一门很有意思的学科", False),
        ("有痛经困扰的同学可以到医务室领取暖宝宝", False),
        ("请以'石膏像写生'为题布置一次美术作业", False),
    ],
)
def test_health_cues_without_a_diagnosis(text: str, blocked: bool) -> None:
    assert (Category.HEALTH in _categories(text)) is blocked


# Compound surnames: the dictionary holds 上官 and 欧阳 as other nouns, or knows 欧阳明 as
# a figure while the pupil is 欧阳明轩.
@pytest.mark.parametrize(
    ("sentence", "name"),
    [("上官雨辰这次数学考了满分", "上官雨辰"), ("欧阳明轩的化学又挂了", "欧阳明轩")],
)
def test_compound_surnames(sentence: str, name: str) -> None:
    assert name in {n for n, kind in _names(sentence) if kind == "name"}
    assert Category.GRADE in _categories(sentence)


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("俺家二丫这回数学又考了个鸭蛋", True),
        ("毛毛英语默写全对，奖励一朵小红花", True),
        ("小宇听写错了一大半，回家要重写", True),
        ("鸭蛋要煮十分钟才熟", False),
        ("这套练习的答案安全对照附在最后", False),
    ],
)
def test_slang_and_items_right_or_wrong(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("劳动委员手腕扭伤了，这周大扫除先别安排他", True),
        ("小北昨天脚崴了，走路一瘸一拐的", True),
        ("如孩子出现发热、咳嗽，请在家休息并告知班主任", False),
        ("如有同学对花粉过敏，请提前告诉老师", False),
    ],
)
def test_injuries_and_conditional_notices(text: str, blocked: bool) -> None:
    assert (Category.HEALTH in _categories(text)) is blocked


@pytest.mark.parametrize(
    ("text", "category", "blocked"),
    [
        ("学委别的科目都好，就是物理拖后腿", Category.GRADE, True),
        ("乔乔有点偏科，语文好数学差", Category.GRADE, True),
        ("小鹏前天出了车祸，头上缝了五针", Category.HEALTH, True),
        ("已知甲、乙两人的语文成绩分别为88分和76分，求差值", Category.GRADE, False),
        ("甲和乙两名同学的体温分别是37.2度和38.5度，谁发烧了？", Category.HEALTH, False),
    ],
)
def test_standing_injuries_and_two_person_items(
    text: str, category: Category, blocked: bool
) -> None:
    assert (category in _categories(text)) is blocked


def test_thanks_to_the_teacher_is_no_name() -> None:
    # The segmenter tags 谢谢 as a name; a doubled word of grammar is no surname.
    assert not [n for n, kind in _names("谢谢老师，成绩单已经收到了") if kind == "name"]
    assert Category.GRADE not in _categories("谢谢老师，成绩单已经收到了。")


@pytest.mark.parametrize(
    ("text", "category", "blocked"),
    [
        ("测验得分在85分以上的，可以免做周末作业", Category.GRADE, False),
        ("晨晨这次测验得了92分以上", Category.GRADE, True),
        ("熬夜容易导致免疫力下降，要早点睡", Category.HEALTH, False),
        ("小强咳嗽发烧，医生给他打了一针，这属于哪种免疫？", Category.HEALTH, False),
        ("Ruby的期中数学只有D，要多练习", Category.GRADE, True),
    ],
)
def test_bands_general_claims_and_item_questions(
    text: str, category: Category, blocked: bool
) -> None:
    assert (category in _categories(text)) is blocked


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("四班这次有三个同学物理不及格", False),  # a count of pupils, not one of them
        ("这些学生的数学基础都比较差", False),
        ("不适合基础差的班级使用这套卷子", False),
        ("荆州密卷的难度很大，基础差的学生别做", False),  # a place heading the clause
        ("孔乙己考了一辈子也没中", False),
        ("这个新来的女生数学只考了四十分", True),
    ],
)
def test_groups_places_and_counts_are_no_person(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("丫头的数学卷子发了，七十都没到", True),
        ("骆子健化学两次小测都没上六十分", True),
        ("他英语作文二十五分只得了九分", True),
        ("唐唐的英语分数是全班唯一不及格的", True),
        ("佟佳音语文阅读理解全军覆没", True),
        ("这篇文章写得十分感人，可以给学生读", False),
        ("听力部分二十分，阅读部分四十分", False),
    ],
)
def test_scores_below_a_mark_single_numerals_and_sections(text: str, blocked: bool) -> None:
    assert (Category.GRADE in _categories(text)) is blocked
