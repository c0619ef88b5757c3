"""Red line v2: one table per recogniser and regression tests per mechanism.

The sentences here are built from parts (people × statements) that are *not* rows of the
development set, so they test the mechanisms — who is meant, what counts as an academic
outcome or a health matter, what makes a subject generic — rather than memorised rows.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory.redline as redline
from memory.redline import PLACEHOLDERS, Category, Hit, explain, is_clean, redact, scan
from memory.redline import health as health_module
from memory.redline.base import Doc
from memory.redline.persons import persons, subject_of
from memory.textview import text_view
from tests.memory.test_redline import full_width

_FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_INVISIBLES = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u202e\u2066\u034f\U000e0041"


def categories(text: str) -> set[Category]:
    return {hit.category for hit in scan(text)}


# --------------------------------------------------------------------------------------
# Public interface
# --------------------------------------------------------------------------------------


def test_public_names_keep_their_import_path() -> None:
    for name in ("scan", "redact", "is_clean", "Category", "PLACEHOLDERS", "Hit", "Redaction"):
        assert hasattr(redline, name)
    assert [c.value for c in Category] == ["id_number", "mobile", "bank_card", "grade", "health"]


def test_explain_gives_reasons_for_blocked_and_passed() -> None:
    blocked = [f for f in explain("覃一帆这次数学不及格") if f.blocked]
    assert blocked and blocked[0].category is Category.GRADE
    assert any("覃一帆" in reason for reason in blocked[0].reasons)
    passed = explain("不及格的同学周五补考")
    assert passed and not any(f.blocked for f in passed)
    assert any("group" in reason for f in passed for reason in f.reasons)


# --------------------------------------------------------------------------------------
# Numbers: the edge rules
# --------------------------------------------------------------------------------------

LEGACY = "110101900307123"  # 15-digit legacy ID with a valid date
# Words that are neither an ID context word, a label nor a sentence end.
_FILL = "这串数字是他爸爸老的旧的那张卡片上印的后来又抄在了本子上请老师帮忙核对一下谢谢您辛苦"


@pytest.mark.parametrize("gap", range(0, 41))
def test_legacy_id_with_the_context_word_later_in_the_sentence(gap: int) -> None:
    text = f"{LEGACY}{_FILL[:gap]}身份证号"
    assert Hit(Category.ID_NUMBER, 0, 15) in scan(text)


@pytest.mark.parametrize("gap", range(0, 41, 5))
def test_legacy_id_with_the_context_word_earlier_in_the_sentence(gap: int) -> None:
    text = f"身份证{_FILL[:gap]}{LEGACY}"
    assert Hit(Category.ID_NUMBER, 3 + gap, 18 + gap) in scan(text)


@pytest.mark.parametrize(
    "text",
    [
        f"{LEGACY}{_FILL[:41]}身份证号",  # beyond the sentence reach
        f"{LEGACY}{_FILL[:13]}。身份证号稍后补交",  # another sentence, beyond the near reach
        f"身份证号稍后补交。{_FILL[:13]}{LEGACY}",
        f"订单号{LEGACY}已发货，请带身份证取件",  # labelled as something else
        f"学号：{LEGACY}，家长说身份证号还没办好",
        f"联系电话{LEGACY}打不通，身份证信息另附",
    ],
)
def test_legacy_id_with_the_context_word_elsewhere_passes(text: str) -> None:
    assert Category.ID_NUMBER not in categories(text), explain(text)


def test_the_afterthought_form_is_blocked() -> None:
    text = f"{LEGACY}——请核对，学生家长提供的是身份证号"
    assert Hit(Category.ID_NUMBER, 0, 15) in scan(text)
    assert Hit(Category.ID_NUMBER, 2, 17) in scan(f"学号{LEGACY}（即身份证号）")


def _legacy_ids() -> st.SearchStrategy[str]:
    def build(region: int, year: int, month: int, day: int, seq: int) -> str:
        return f"{region}{year % 100:02d}{month:02d}{day:02d}{seq:03d}"

    return st.builds(
        build,
        st.integers(110000, 829999),
        st.integers(1900, 1999),
        st.integers(1, 12),
        st.integers(1, 28),
        st.integers(0, 999),
    )


_NEUTRAL = st.text(
    alphabet="这串数字是他爸的那张卡上印后来又抄在本子请老师帮忙核对一下谢您辛苦,、 ", max_size=36
)
_CONTEXT = st.sampled_from(["身份证", "身份证号", "证件号码", "公民身份号码", "学籍号", "ID"])


@_FAST
@given(value=_legacy_ids(), before=_NEUTRAL, after=_NEUTRAL, word=_CONTEXT, side=st.booleans())
def test_any_legacy_id_with_a_context_word_in_its_sentence_is_blocked(
    value: str, before: str, after: str, word: str, side: bool
) -> None:
    text = f"{word}{before}{value}{after}" if side else f"{before}{value}{after}{word}"
    start = text.index(value)
    assert Hit(Category.ID_NUMBER, start, start + 15) in scan(text), (text, explain(text))


@_FAST
@given(value=_legacy_ids(), before=_NEUTRAL, after=_NEUTRAL)
def test_a_legacy_id_shape_without_a_context_word_passes(
    value: str, before: str, after: str
) -> None:
    text = f"{before}{value}{after}"
    assert Category.ID_NUMBER not in categories(text), text


@_FAST
@given(
    body=st.from_regex(r"1[3-9][0-9]{9}", fullmatch=True),
    form=st.sampled_from(
        [
            "+86{a} {b} {c}",
            "+86{a}-{b}-{c}",
            "+86-{a}-{b}-{c}",
            "+86 {a} {b} {c}",
            "+86({a}){b}{c}",
            "+86 ({a}) {b} {c}",
            "+86.{a}.{b}.{c}",
            "+86{a}{b}{c}",
            "+86{a}{b} {c}",
            "+0086 {a} {b} {c}",
        ]
    ),
    wide=st.booleans(),
    invisible=st.sampled_from(["", *_INVISIBLES]),
    before=st.sampled_from(["", "家长电话", "联系：", "手机 "]),
)
def test_plus86_glued_to_a_grouped_mobile_is_caught(
    body: str, form: str, wide: bool, invisible: str, before: str
) -> None:
    typed = form.format(a=body[:3], b=body[3:7], c=body[7:])
    if wide:
        typed = full_width(typed)
    typed = typed[:4] + invisible + typed[4:]
    text = before + typed + "，有事联系"
    assert Hit(Category.MOBILE, len(before), len(before) + len(typed)) in scan(text)
    assert not re.search(r"[0-9]", unicodedata.normalize("NFKC", redact(text).text))


@pytest.mark.parametrize(
    "text",
    ["+86 2 1234 5678", "+86(10)12345678", "+86.123.4567.8901", "电话 +86 010-12345678"],
)
def test_plus86_with_no_mobile_behind_it_passes(text: str) -> None:
    assert Category.MOBILE not in categories(text)


# --------------------------------------------------------------------------------------
# Who is meant
# --------------------------------------------------------------------------------------


def refs(sentence: str) -> list[tuple[str, str]]:
    doc = Doc(text_view(sentence).text)
    return [(doc.text[r.start : r.end], r.kind) for r in persons(doc, 0, len(doc.text))]


@pytest.mark.parametrize(
    ("sentence", "who", "kind"),
    [
        ("廖思琪最近总是迟到", "廖思琪", "name"),  # a name the segmenter finds
        ("笪俊豪最近总是迟到", "笪俊豪", "name"),  # rare surname + unknown given name
        ("Jessica最近总是迟到", "Jessica", "latin"),
        ("团团（吴梓萌）最近总是迟到", "吴梓萌", "bracket"),
        ("23号同学最近总是迟到", "23号同学", "seat"),
        ("学号9的同学最近总是迟到", "学号9的同学", "seat"),
        ("我家老大最近总是迟到", "我家老大", "role"),
        ("靠窗那个男生最近总是迟到", "那个男生", "role"),
        ("体育委员最近总是迟到", "体育委员", "role"),
        ("英语课代表最近总是迟到", "英语课代表", "role"),
        ("她最近总是迟到", "她", "pronoun"),
        ("My daughter最近总是迟到", "My daughter", "role"),
        ("郜文轩对芒果过敏", "郜文轩", "x_dui"),
    ],
)
def test_person_references(sentence: str, who: str, kind: str) -> None:
    # The reference starts where the person is named (a rare given name may be cut short).
    found = refs(sentence)
    assert any(k == kind and w[:2] == who[:2] for w, k in found), found


@pytest.mark.parametrize(
    "sentence",
    ["Math test on Friday", "这道题很可爱", "Please review Unit 3", "此问题需要讨论"],
)
def test_no_person_in_these(sentence: str) -> None:
    assert [r for r in refs(sentence) if r[1] not in ("weak", "self")] == []


def test_a_dictionary_name_without_school_life_is_a_public_figure() -> None:
    doc = Doc("鲁迅的文章")
    assert all(r.weight < 0.5 for r in persons(doc, 0, len(doc.text)) if r.kind == "name")
    doc = Doc("鲁迅这次期末数学不及格")  # a pupil who happens to share the name
    assert any(r.weight >= 0.5 for r in persons(doc, 0, len(doc.text)) if r.kind == "name")


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("《红楼梦》里林黛玉常年吃药", "fiction"),
        ("课文中的他后来生病了", "fiction"),
        ("如果他这次不及格就要补考", "hypothesis"),
        ("有过敏体质的同学请告诉老师", "group"),
        ("某患者出现发烧症状", "patient"),
        ("全班近视率达到了60%", "statistic"),
        ("它发烧了，不吃东西", "animal"),
    ],
)
def test_generic_subjects(sentence: str, reason: str) -> None:
    doc = Doc(text_view(sentence).text)
    finding = next(f for f in explain(sentence) if f.category in (Category.GRADE, Category.HEALTH))
    subject = subject_of(doc, finding.start, finding.end, self_counts=True)
    assert subject.weight == 0.0
    assert not finding.blocked


# --------------------------------------------------------------------------------------
# Grades: every form, about a person; the same words about nobody pass
# --------------------------------------------------------------------------------------

PEOPLE = ("廖思琪", "笪俊豪", "Jessica", "团团（吴梓萌）", "23号同学", "我家老大", "她")
GROUPS = ("全班同学", "大部分学生", "每个学生", "我们班接力队")

GRADE_FORMS = {
    "pass_fail": ("{p}这次物理不及格", "{p}化学挂科了，开学补考", "{p}期中数学没及格"),
    "slang": ("{p}这回英语考砸了", "{p}数学又考崩了", "{p}地理红灯了"),
    "qualitative": ("{p}期末语文评了个良", "{p}物理成绩很差", "{p}的英语在班上垫底"),
    "progress": (
        "{p}数学从六十多提高到八十多",
        "{p}这次名次往后退了十几名",
        "{p}比上次少考了二十分",
    ),
    "bare_number": ("{p}月考数学76", "{p}期末总分498", "{p}这次单元测试81"),
    "approx": ("{p}物理八十出头", "{p}这次掉到年级两百名以后", "{p}数学才考了五十多"),
    "transcript": ("把{p}的期末成绩单拍给我", "{p}的素质报告册上评语很差"),
    "english": ("{p} failed the physics quiz", "{p}的 midterm 只拿了个 D"),
}


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize(
    "pattern", [p for forms in GRADE_FORMS.values() for p in forms], ids=lambda p: p[:10]
)
def test_grade_forms_about_a_person_are_blocked(person: str, pattern: str) -> None:
    text = pattern.format(p=person)
    assert Category.GRADE in categories(text), explain(text)
    assert PLACEHOLDERS[Category.GRADE] in redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "本题5分，答错不得分",
        "满分150分，90分及格",
        "作文评分分为优、良、中、差四档",
        "不及格的同学周五下午补考",
        "全年级平均分78.5，比上次提高了3分",
        "这次月考有十几个人不及格",
        "我们班接力队拿了年级第二名",
        "合唱比赛我们班获得了优秀奖",
        "希望大家期末都能考到九十分以上",
        "范进中举后高兴得发了疯",
        "请出一份满分120分的期中试卷，及格线72分",
        "他说这次期末考试的范围是前三单元",
        "他在绘画比赛中得了第一名",
        "每个学生这次物理都不及格",
    ],
)
def test_grade_words_about_nobody_pass(text: str) -> None:
    assert Category.GRADE not in categories(text), explain(text)


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_in_the_person_slot_passes(group: str) -> None:
    for pattern in ("{p}这次物理不及格", "{p}数学从六十多提高到八十多"):
        text = pattern.format(p=group)
        assert Category.GRADE not in categories(text), explain(text)


# --------------------------------------------------------------------------------------
# Health: vocabulary, condition heads, open cues
# --------------------------------------------------------------------------------------

HEALTH_FORMS = {
    "vocabulary": ("{p}得了猩红热", "{p}有高度近视，看不清黑板", "{p}最近在吃抗生素"),
    "head": ("{p}查出了肾小球肾炎", "{p}有轻度贫血症", "{p}得了甲状腺瘤"),
    "cue": ("医生说{p}要卧床休息", "{p}昨天去了急诊", "{p}身体不舒服，提前回家了"),
    "event": ("{p}怀孕三个月了", "{p}下周做扁桃体手术", "{p}请了三天病假"),
    "english": ("{p} is allergic to pollen", "{p} was hospitalized last week"),
}


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize(
    "pattern", [p for forms in HEALTH_FORMS.values() for p in forms], ids=lambda p: p[:10]
)
def test_health_forms_about_a_person_are_blocked(person: str, pattern: str) -> None:
    text = pattern.format(p=person)
    assert Category.HEALTH in categories(text), explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "有哮喘的同学体育课前告诉老师",
        "对芒果过敏的同学午餐请注意",
        "一位糖尿病病人需要注射哪种激素？",
        "这首诗表达了诗人抑郁的情绪",
        "这道题真让人头疼",
        "讲评试卷要对症下药，找准病根",
        "他的作文有个通病，结尾仓促",
        "全班近视率达到了60%",
        "下周三全校体检，请空腹",
        "她上台前感到非常焦虑",
        "小狗发烧了，不肯吃东西",
        "设计一节关于预防流感的健康教育课",
        "我不想让学生感染疾病，应该注意什么？",
    ],
)
def test_health_words_about_nobody_pass(text: str) -> None:
    assert Category.HEALTH not in categories(text), explain(text)


def test_the_speaker_counts_for_health_but_not_for_grades() -> None:
    assert Category.HEALTH in categories("我最近在吃降压药")
    assert Category.GRADE not in categories("我这次驾照科目二没过")


def test_vocabulary_is_data_and_curated_by_rule() -> None:
    terms = health_module.vocabulary()
    assert {"腮腺炎", "脊柱侧弯", "癫痫", "怀孕"} <= set(terms)
    # Generic words of the field are not in the list.
    assert not {"医院", "检查", "恢复", "医生", "健康"} & set(terms)
    rows = [
        "医院\t580436",
        "检查\t580138",
        "恢复\t329411",
        "腮腺炎\t9000",
        "冷门术语\t120",
        "癌\t5",
    ]
    assert health_module.curate(rows) == ["腮腺炎", "冷门术语"]


def test_an_extra_term_list_can_be_configured(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    extra = tmp_path / "medical.txt"
    extra.write_text("枫糖尿症\t15\n医院\t580436\n", encoding="utf-8")
    monkeypatch.setenv("REDLINE_MEDICAL_TERMS", str(extra))
    health_module.vocabulary.cache_clear()
    health_module._terms.cache_clear()
    try:
        assert "枫糖尿症" in health_module.vocabulary()
        assert "医院" not in health_module.vocabulary()
    finally:
        monkeypatch.delenv("REDLINE_MEDICAL_TERMS")
        health_module.vocabulary.cache_clear()
        health_module._terms.cache_clear()


# --------------------------------------------------------------------------------------
# The text view: invisible characters and full-width forms change nothing
# --------------------------------------------------------------------------------------

_POSITIVES = [
    ("笪俊豪这次物理不及格", Category.GRADE),
    ("Jessica数学八十出头", Category.GRADE),
    ("23号同学得了猩红热", Category.HEALTH),
    ("我家老大请了三天病假", Category.HEALTH),
]
_NEGATIVES = ["不及格的同学周五下午补考", "有哮喘的同学体育课前告诉老师", "满分150分，90分及格"]


@_FAST
@given(
    case=st.sampled_from(_POSITIVES),
    at=st.integers(0, 12),
    ch=st.sampled_from(_INVISIBLES),
)
def test_a_zero_width_character_anywhere_never_unblocks(
    case: tuple[str, Category], at: int, ch: str
) -> None:
    text, category = case
    at = min(at, len(text))
    assert category in categories(text[:at] + ch + text[at:])


@_FAST
@given(text=st.sampled_from(_NEGATIVES), at=st.integers(0, 12), ch=st.sampled_from(_INVISIBLES))
def test_a_zero_width_character_anywhere_never_blocks(text: str, at: int, ch: str) -> None:
    at = min(at, len(text))
    assert is_clean(text[:at] + ch + text[at:])


@pytest.mark.parametrize(("text", "category"), _POSITIVES)
def test_full_width_forms_fold(text: str, category: Category) -> None:
    assert category in categories(full_width(text))
    assert category in categories(full_width(text).replace("，", ","))


# --------------------------------------------------------------------------------------
# The development set: the figures the benchmark reports, held as a floor
# --------------------------------------------------------------------------------------

DEV_SET = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "redline_dev.jsonl"


def _rates(path: Path, split: str) -> dict[str, float]:
    """Per label, the share of the split's rows the red line gets right."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    by: dict[str, list[bool]] = {}
    for row in (r for r in rows if r["split"] == split):
        found = {h.category.value for h in scan(row["text"])}
        ok = row["category"] in found if row["category"] != "none" else not found
        by.setdefault(row["category"], []).append(ok)
    return {k: sum(v) / len(v) for k, v in by.items()}


def test_development_split_floor() -> None:
    # Only the dev split (the held-back split is reported by the benchmark, never tuned on).
    assert sum(1 for _ in DEV_SET.open(encoding="utf-8")) >= 1500
    rate = _rates(DEV_SET, "dev")
    assert rate["grade"] >= 0.95 and rate["health"] >= 0.95, rate
    assert rate["none"] >= 0.99, rate
    assert rate["mobile"] == 1.0, rate


# --------------------------------------------------------------------------------------
# Mechanisms found by the hand-written check set (benchmarks/data/redline_handwritten.jsonl);
# the sentences here are new, not rows of it.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # A parent's "our family" is the child.
        ("我家梓萌这次数学没及格", Category.GRADE),
        ("我们家的英语又退步了，才七十来分", Category.GRADE),
        ("你家丫头期末考了年级前二十", Category.GRADE),
        ("俺家崽昨晚发高烧", Category.HEALTH),
        # Pet names heading a clause, whatever the segmenter tagged them.
        ("乐乐这回英语单元测验考了九十五分", Category.GRADE),
        ("果果前天得了手足口病", Category.HEALTH),
        ("小北上周请了病假，说是肠胃不好", Category.HEALTH),
        ("钱多多拔了两颗牙，脸肿了", Category.HEALTH),
        # A roster of people and scores.
        ("期末成绩：思琪 92，浩然 78，Amy 85", Category.GRADE),
        # Full marks without a verb, passing, the lowest in the class.
        ("雅雯语文作文满分", Category.GRADE),
        ("我家孩子这次物理总算及格了", Category.GRADE),
        ("他这学期数学一直在及格线附近徘徊", Category.GRADE),
        ("6号同学的月考成绩是班上最低的", Category.GRADE),
        # English with a bare number or a standing.
        ("Sam got 64 on the science test", Category.GRADE),
        ("Ella came last in the maths quiz", Category.GRADE),
        # Items right or wrong, rank moves.
        ("子轩这次听写只对了五个", Category.GRADE),
        ("他这回月考退了三十多名", Category.GRADE),
        # A question about someone presupposes the fact.
        ("为什么梓涵这次数学又不及格了？", Category.GRADE),
        # Medicine, departments, vomiting.
        ("思远每天中午要吃两片药", Category.HEALTH),
        ("她上周去了皮肤科，说是湿气重", Category.HEALTH),
        ("我家老大半夜吐了两次", Category.HEALTH),
        ("Mason had his tonsils out in May", Category.HEALTH),
        # A question in a later clause does not make a fact a question.
        ("孩子查出来有贫血，要不要跟体育老师说一声", Category.HEALTH),
    ],
)
def test_mechanisms_from_the_handwritten_check(text: str, category: Category) -> None:
    assert category in categories(text), explain(text)


@pytest.mark.parametrize(
    "text",
    [
        "编一道应用题：小红考了92分，小刚比她少8分，小刚考了多少分？",  # characters of an item
        "出一道题：丽丽吃了三片药，还剩几片？",
        "下周测800米，请大家穿运动鞋",  # 下周 + 测, not a weekly test
        "第一组 12、第二组 15，其余同学自由练习",  # a list of numbers naming nobody
        "张老师 30、李老师 25，这是各班报名人数",
        "I got 3 apples and 2 pears",
        "这道题错了3处，请订正",
        "为什么近视的人越来越多？",
        "他吐了口气，继续写作业",
        "画画课上大家都进步了很多",  # 画画 is a lesson, not a pet name
        "<Lisa>:为什么奶奶会生病呢？",  # the subject right before the predicate: a question
        "绘画比赛他只得了第六名，但水平进步了很多",  # a competition, not a grade
        # Ordinary teacher texts that were blocked (the teacher runs of recall_teacher_data):
        "Objectives: understand 流感 and 洗手. Steps: warm-up, practice on 晨检",  # headings
        "Scratch评分标准：A档（85分以上）：角色完整；B档：70分至84分",  # rubric bands
        "准备初二（1）班的周测，重点是中心思想",  # 是中心 is no 中 grade
        "期末评语（高三（2）班）：你在实验方面进步明显",  # 高三 is a school year
    ],
)
def test_the_same_words_about_nobody_or_nothing_pass(text: str) -> None:
    found = categories(text)
    assert Category.GRADE not in found and Category.HEALTH not in found, explain(text)


HANDWRITTEN_SET = DEV_SET.with_name("redline_handwritten.jsonl")


def test_handwritten_check_half_floor() -> None:
    # Only the check half (the sealed half is reported by the benchmark, never tuned on).
    assert sum(1 for _ in HANDWRITTEN_SET.open(encoding="utf-8")) >= 300
    rate = _rates(HANDWRITTEN_SET, "check")
    assert rate["grade"] >= 0.95 and rate["health"] >= 0.9, rate
    assert rate["none"] >= 0.99, rate
    assert rate["id_number"] == rate["mobile"] == rate["bank_card"] == 1.0, rate
