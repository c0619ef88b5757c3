"""Regression tables for the sixth red-line round: an identifiable subject is required.

A grade or health statement is blocked only when someone identifiable is its subject. A
bare word for pupils or teachers (学生, 儿童, 老师, student) names nobody: it takes the
subject's place, so a statement about it is about a class of people or the addressee,
unless a singular classifier makes it someone (有个学生) or a surname heads the title
(方老师). A demonstrative with a group's classifier (这帮, 这届, 那群) is a group, not a
pointed-at pupil, and a relative clause addressed to a group reaches across an
enumeration (患有哮喘、心脏病等疾病的同学…).

Every sentence here is new (written for these tests, not copied from a labelled set).
Each table is checked on both scan paths (``scan``, which reuses the trigger pass's
anchors and caches sentences, cold and warm; ``explain``, whose recognisers run their own
automata) and in full-width and zero-width forms.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.redline import Category, engine, grades
from memory.redline.base import THRESHOLD, Doc
from memory.redline.engine import clear_sentence_cache
from memory.redline.persons import persons
from memory.textview import text_view
from tests.memory.test_redline import assert_decided, disguised, full_width

# A bare word for pupils or teachers is nobody; a child of the speaker, a named pupil,
# a singular someone or a pointed-at pupil is someone.
CLASS_NOUNS = [
    ("学生一紧张就容易胃疼，考前要多放松", Category.HEALTH, False),
    ("高二的学生作息乱，熬夜失眠的很多", Category.HEALTH, False),
    ("儿童哮喘在春天比较容易发作", Category.HEALTH, False),
    ("四分之一的学生视力不达标，近视的占多数", Category.HEALTH, False),
    ("学生挂科以后往往没信心，辅导员该如何沟通", Category.GRADE, False),
    ("老师您好，想问一下补考报名截止到几号", Category.GRADE, False),
    ("Students often fail the first quiz of the term", Category.GRADE, False),
    ("班里有个学生查出了白血病，大家都很难过", Category.HEALTH, True),
    ("隔壁班一位学生这次期中数学不及格", Category.GRADE, True),
    ("这个学生最近老是头疼", Category.HEALTH, True),
    ("孩子昨天发高烧，今天请一天假", Category.HEALTH, True),
    ("郑子涵这次月考数学不及格", Category.GRADE, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), CLASS_NOUNS)
def test_a_bare_word_for_pupils_is_nobody(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


# A surname heading a title is a person: the title alone is the addressee.
TITLES = [
    ("邱老师做完手术还在休养，这周代课", Category.HEALTH, True),
    ("蔡同学这次期末物理没及格", Category.GRADE, True),
    ("老师，住院的手续要带什么材料", Category.HEALTH, False),
    ("新老师这周在医院做体检", Category.HEALTH, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), TITLES)
def test_a_surname_before_a_title_is_someone(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


# A demonstrative with a group's classifier is a group, whatever stands between it and
# the noun; a demonstrative with a singular one points at someone.
GROUP_DEMONSTRATIVES = [
    ("这届学生的物理成绩整体退步了", Category.GRADE, False),
    ("那群小朋友的期末成绩都不理想", Category.GRADE, False),
    ("这批新生里近视的不少", Category.HEALTH, False),
    ("这帮调皮孩子又考砸了", Category.GRADE, False),
    ("这个调皮孩子又考砸了", Category.GRADE, True),
    ("那位女生上周骨折了", Category.HEALTH, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), GROUP_DEMONSTRATIVES)
def test_a_group_classifier_is_no_pointed_at_pupil(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


def test_group_demonstratives_yield_no_identifiable_reference() -> None:
    for sentence in ("这届学生", "那群小朋友", "这帮调皮孩子", "这批新生"):
        refs = persons(Doc(sentence), 0, len(sentence))
        assert all(r.weight < THRESHOLD for r in refs), (sentence, refs)


# A relative clause addressed to a group reaches across an enumeration's 、.
ENUMERATED_RELATIVES = [
    ("提醒：患有癫痫、哮喘等疾病的同学不参加游泳课", Category.HEALTH, False),
    ("对花生、芒果过敏的小朋友请提前告诉食堂", Category.HEALTH, False),
    ("有近视、散光的学生请坐前排", Category.HEALTH, False),
    ("提醒：钟梓航有癫痫、哮喘，游泳课请留意", Category.HEALTH, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), ENUMERATED_RELATIVES)
def test_a_relative_clause_to_a_group_reaches_across_an_enumeration(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


_ROWS = CLASS_NOUNS + TITLES + GROUP_DEMONSTRATIVES + ENUMERATED_RELATIVES


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), row=st.sampled_from(_ROWS), wide=st.booleans())
def test_full_width_and_zero_width_forms_decide_alike_on_both_paths(
    data: st.DataObject, row: tuple[str, Category, bool], wide: bool
) -> None:
    text, category, blocked = row
    typed = disguised(data, text, wide=wide)
    assert_decided(typed, category, blocked)


_DOTTED_PARTS = (
    *("……", "...", ".", "3.5", "8.", ".6", "。.", "?.", "．", "１", "\u200b", "\n", " "),
    *("考了", "85分", "过敏", "住院", "李华", "。", "E", "got a C"),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(_DOTTED_PARTS), max_size=40).map("".join))
def test_full_stops_found_around_the_triggers_delimit_as_the_searches_do(text: str) -> None:
    # Full stops are not in the trigger automaton: the nearest ones around a trigger
    # (ellipses, decimal points, full-width forms) bound the same sentences as the regex
    # searches of Doc.sentence.
    view = text_view(text).text
    threshold = engine._DELIMIT_ALL_FROM
    try:
        engine._DELIMIT_ALL_FROM = 0
        clear_sentence_cache()
        found = engine._triggered(Doc(view))
        engine._DELIMIT_ALL_FROM = 10**9
        clear_sentence_cache()
        searched = engine._triggered(Doc(view))
    finally:
        engine._DELIMIT_ALL_FROM = threshold
    assert found == searched
    doc = Doc(view)
    for lo, hi in found:
        assert doc.sentence(lo) == (lo, hi)


# A capital A-F standing alone opens a sentence only after a letter grade's lead.
LETTER_GRADES = [
    ("他这次英语得了个B，要加油", Category.GRADE, True),
    ("夏语桐期末数学等级是  A", Category.GRADE, True),
    ("Tom got a C on the quiz", Category.GRADE, True),
    ("Lily's grade:  D", Category.GRADE, True),
    ("把Part A和Part B各出五道题", Category.GRADE, False),
    ("选项C的说法是错的", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), LETTER_GRADES)
def test_a_letter_grade_needs_its_lead(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


_LETTER = next(p for p, kind, _, _ in grades._ITEMS if kind == "letter")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lead=st.sampled_from(["得了", "等级", "是", "got", "graded", "Grade", "an", "A"]),
    gap=st.integers(0, 40),
    middle=st.sampled_from(["", "个", "个优", "数学", "个英语", "全科"]),
    connective=st.sampled_from(["", "是", ":", "of", "was", "an", "a"]),
    tail=st.integers(0, 40),
    space=st.sampled_from([" ", "\u3000", "\t", "\n", "\u200b "]),
    letter=st.sampled_from(["A", "B+", "C-", "F", "Ｄ"]),
    wide=st.booleans(),
)
def test_every_letter_grade_is_confirmed_by_its_lead(
    lead: str,
    gap: int,
    middle: str,
    connective: str,
    tail: int,
    space: str,
    letter: str,
    wide: bool,
) -> None:
    # Whatever the runs of spaces (any kind, zero-width ones among them) around the lead's
    # parts, the check of the trigger pass confirms the capital of every letter grade.
    text = "王一诺" + lead + space * gap + middle + connective + space * tail + letter
    view = text_view(full_width(text) if wide else text).text
    for match in _LETTER.finditer(view):
        capital = match.start() + len(match.group().rstrip("+-")) - 1
        assert grades.CONFIRMS["letter"](view, capital, capital + 1), view


# --------------------------------------------------------------------------------------
# Seventh round (each sentence new, none from a labelled set)
# --------------------------------------------------------------------------------------

# A given name heading a clause without its surname, whatever the segmenter tagged it
# (可欣/vg, 俊豪/ag, 诗雨/n, 梓 + 萱), read by its name model after a probe surname; a
# school word of the same shape (学情, 小测, 高二) or a dictionary word is none.
CLAUSE_INITIAL_GIVEN_NAMES = [
    ("可欣这次月考数学不及格", Category.GRADE, True),
    ("佳怡这学期英语退步了不少", Category.GRADE, True),
    ("俊豪视力下降得厉害，要配眼镜", Category.HEALTH, True),
    ("老师好，诗雨最近总是咳嗽", Category.HEALTH, True),
    ("梓萱离及格还差三分", Category.GRADE, True),
    ("学情分析这次要写得细一点，成绩分布也放进去", Category.GRADE, False),
    ("小测这次题目偏难，平均分不高", Category.GRADE, False),
    ("高二这次期末的卷子谁来出？", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), CLAUSE_INITIAL_GIVEN_NAMES)
def test_a_given_name_heading_a_clause_is_a_pupil(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)


@pytest.mark.parametrize(
    ("sentence", "name"),
    [("可欣这次没考好", "可欣"), ("俊豪视力不好", "俊豪"), ("梓萱离满分差一点", "梓萱")],
)
def test_a_clause_initial_given_name_is_a_name_reference(sentence: str, name: str) -> None:
    refs = persons(Doc(sentence), 0, len(sentence))
    assert (name, "name") in [(sentence[r.start : r.end], r.kind) for r in refs]


# Outcome forms: a pass on the line, failed subjects counted in 科, a "needs improving"
# grade, an approximate rank, points short of a mark, English "went from X to Y".
OUTCOME_FORMS = [
    ("Jerry这次物理压线及格", Category.GRADE, True),
    ("晓峰上学期挂了四科", Category.GRADE, True),
    ("他这学期挂两科，要重修", Category.GRADE, True),
    ("我女儿的数学评价是有待提高", Category.GRADE, True),
    ("她这次排在年级三百名左右", Category.GRADE, True),
    ("他数学差5分满分", Category.GRADE, True),
    ("我儿子英语还差两分及格", Category.GRADE, True),
    ("Ben went from 48 to 71 in the biology test.", Category.GRADE, True),
    ("Mia went from a C to an A in her English exam.", Category.GRADE, True),
    ("雨彤期中物理只拿了个及格", Category.GRADE, True),
    ("他这次数学差一分满分", Category.GRADE, True),
    ("评价量表分为优秀、良好、待提高三档", Category.GRADE, False),
    ("出一道题：小红比小明差5分，小明考了多少分？", Category.GRADE, False),
    ("The class average went from 70 to 76 this term.", Category.GRADE, False),
]


@pytest.mark.parametrize(("text", "category", "blocked"), OUTCOME_FORMS)
def test_more_outcome_forms(text: str, category: Category, blocked: bool) -> None:
    assert_decided(text, category, blocked)


# Failing eyesight is a cue; a symptom as the result of a feeling, a joke, a novel's
# character in English and an adult's hospital errand pass.
HEALTH_EDGES = [
    ("他最近视力下降得很快", Category.HEALTH, True),
    ("我家孩子视力只有4.7了", Category.HEALTH, True),
    ("视力下降的同学请到医务室登记", Category.HEALTH, False),
    ("这节课孩子们把我笑得肚子疼", Category.HEALTH, False),
    ("被这帮孩子气得我头疼，开玩笑的", Category.HEALTH, False),
    ("In the novel, the narrator's sister falls ill with a fever.", Category.HEALTH, False),
    ("我周五陪我爸去医院复查，下午的课调一下", Category.HEALTH, False),
    ("我明早要带我婆婆去医院拿药，早读请你帮忙看一下", Category.HEALTH, False),
    ("刘老师下周去医院复查，他的课我来代", Category.HEALTH, False),
    ("我带孩子去医院复查，明天请一天假", Category.HEALTH, True),
    ("他肚子疼得厉害，笑都笑不出来", Category.HEALTH, True),
    ("Oscar has a broken wrist, so he can't take notes.", Category.HEALTH, True),
]


@pytest.mark.parametrize(("text", "category", "blocked"), HEALTH_EDGES)
def test_eyesight_hyperbole_fiction_and_adult_errands(
    text: str, category: Category, blocked: bool
) -> None:
    assert_decided(text, category, blocked)
