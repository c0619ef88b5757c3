"""The red-line filter: table tests per category and hypothesis properties.

The tables (``CASES``) are also read by ``benchmarks/redline.py``, which reports how many
positives are caught and negatives pass per category.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import unicodedata
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory.redline as redline
from memory.redline import PLACEHOLDERS, Category, Hit, explain, is_clean, redact, scan
from memory.redline.engine import clear_sentence_cache

# --------------------------------------------------------------------------------------
# Builders: IDs and cards are computed, never copied from somewhere
# --------------------------------------------------------------------------------------

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def id_check(body17: str) -> str:
    """ISO 7064 MOD 11-2 check character of a resident ID (GB 11643-1999)."""
    return "10X98765432"[sum(int(d) * w for d, w in zip(body17, _WEIGHTS, strict=True)) % 11]


def make_id(region: str = "110101", birth: str = "19900307", seq: str = "123") -> str:
    body = region + birth + seq
    return body + id_check(body)


def bad_check(value: str) -> str:
    """The same ID with a wrong check character."""
    wrong = "0" if value[-1] != "0" else "1"
    return value[:-1] + wrong


def luhn_complete(partial: str) -> str:
    """Append the Luhn check digit."""
    for d in "0123456789":
        if luhn_ok(partial + d):
            return partial + d
    raise AssertionError("unreachable")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# Characters a writer (or an attacker) can slip into a sentence without changing how it reads.
SLIPPED_INVISIBLES = "\u200b\u200c\u200d\u2060\ufeff\u00ad"


def disguised(data: st.DataObject, text: str, *, wide: bool) -> str:
    """``text`` in full-width forms (``wide``), with up to four invisible characters drawn
    into it: the red-line tables' property tests decide the disguised row as the plain one."""
    chars = list(full_width(text) if wide else text)
    for _ in range(data.draw(st.integers(0, 4))):
        chars.insert(
            data.draw(st.integers(1, len(chars) - 1)),
            data.draw(st.sampled_from(SLIPPED_INVISIBLES)),
        )
    return "".join(chars)


def decisions(text: str, category: Category) -> tuple[bool, bool, bool]:
    """Whether ``category`` is blocked by a cold scan, a warm scan and ``explain``."""
    clear_sentence_cache()
    cold = category in {h.category for h in scan(text)}
    warm = category in {h.category for h in scan(text)}
    explained = any(f.category is category and f.blocked for f in explain(text))
    return cold, warm, explained


def assert_decided(text: str, category: Category, blocked: bool) -> None:
    """Both scan paths and ``explain`` agree that ``category`` is (not) blocked."""
    assert decisions(text, category) == (blocked, blocked, blocked), text


def group(text: str, sizes: tuple[int, ...], sep: str = " ") -> str:
    out, pos = [], 0
    for size in sizes:
        out.append(text[pos : pos + size])
        pos += size
    return sep.join(out)


def apply(text: str, hits: list[Hit]) -> str:
    parts, pos = [], 0
    for hit in hits:
        parts += [text[pos : hit.start], PLACEHOLDERS[hit.category]]
        pos = hit.end
    return "".join([*parts, text[pos:]])


ID = make_id()  # 110101 19900307 123 + check
ID_X = next(
    make_id(seq=f"{n:03d}") for n in range(1000) if id_check("11010119900307" + f"{n:03d}") == "X"
)
ID_LUHN = next(  # a valid ID that is also Luhn-valid: must be reported as an ID
    v for n in range(1000) if luhn_ok(v := make_id("320102", "20040229", f"{n:03d}"))
)
CARD16 = luhn_complete("622202123456789")
CARD19 = luhn_complete("621700123456789012")
BAD_CARD16 = CARD16[:-1] + str((int(CARD16[-1]) + 1) % 10)
LEGACY = "110101900307123"  # 6-digit region, 900307, sequence 123


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    category: Category
    text: str
    blocked: bool  # True: a positive that must be caught; False: must pass untouched


def _pos(category: Category, *texts: str) -> list[Case]:
    return [Case(category, t, True) for t in texts]


def _neg(category: Category, *texts: str) -> list[Case]:
    return [Case(category, t, False) for t in texts]


ID_CASES = (
    _pos(
        Category.ID_NUMBER,
        ID,
        ID_X,
        ID_X[:-1] + "x",
        ID_LUHN,
        f"学生身份证{ID}家住",
        f"身份证号：{ID}。",
        group(ID, (6, 8, 4)),
        group(ID, (4, 4, 4, 4, 2)),
        group(ID, (6, 8, 4), "-"),
        group(ID, (3, 3, 4, 4, 4), " - "),
        full_width(ID),
        full_width(group(ID, (6, 8, 4))),
        "\u200b".join(ID),
        ID[:6] + "\u2060" + ID[6:14] + "\ufeff" + ID[14:],
        ID[:9] + "\u202e" + ID[9:],
        f"G{ID}",
        f"学籍号g{ID}",
        f"Ｇ{full_width(ID)}",
        f"G\u200b{ID}",
        f"学生{ID}，家长{make_id('440305', '19781231', '457')}",
        make_id("820000", "20000229", "001"),  # leap day
        f"ID:{LEGACY}",
        f"身份证号{LEGACY}",
        f"{LEGACY}是他的证件号码",
        f"学籍号 {group(LEGACY, (6, 6, 3))}",
        f"公民身份号码 {LEGACY}",
    )
    + _neg(
        Category.ID_NUMBER,
        bad_check(ID),
        f"身份证{bad_check(ID)}",
        "11010119990230" + "123" + id_check("11010119990230123"),  # 1999-02-30
        "11010119000229" + "123" + id_check("11010119000229123"),  # 1900 is no leap year
        "11010118991231" + "123" + id_check("11010118991231123"),  # before 1900
        "11010130010101" + "123" + id_check("11010130010101123"),  # future year
        "91010119900307" + "123" + id_check("91010119900307123"),  # region cannot start with 9
        "01010119900307" + "123" + id_check("01010119900307123"),
        ID[:17],  # 17 digits
        f"9{ID}",  # part of a longer digit run
        f"{ID}5",
        f"订单号{LEGACY}",  # 15 digits, no context word
        LEGACY,
        "身份证号110101901332123",  # legacy with month 13
        "身份证号110101900230123",  # legacy with Feb 30
        "请核对身份证件，编号为 2024 年第 3 批",
    )
)

MOBILE_CASES = _pos(
    Category.MOBILE,
    "13800138000",
    "联系电话13912345678，下午可打",
    "138 0013 8000",
    "138-0013-8000",
    "+86 138 0013 8000",
    "+86-138-0013-8000",
    "+8613800138000",
    "8613800138000",
    "0086 13800138000",
    "86 138 0013 8000",
    "家长手机：１３８００１３８０００",
    "１３８－００１３－８０００",
    "1\u200b3\u200b8\u200b0\u200b0\u200b1\u200b3\u200b8\u200b0\u200b0\u200b0",
    "他妈妈的电话是19912345678吗",
    "微信ab13800138000",
    "138 00138000",
) + _neg(
    Category.MOBILE,
    "138001380001",  # 12-digit run
    "1380013800",  # 10 digits
    "12800138000",  # 12x is no mobile prefix
    "213800138000",
    "138 0013 800",
    "座机 010-12345678",
    "订单 2024 0613 0012",
    "第13800138000000号",
    "电话会议号码是 8888 6666",
    "我的工号是20230815",
    "这本书的ISBN是978-7-107-31234-5",
)

CARD_CASES = (
    _pos(
        Category.BANK_CARD,
        CARD16,
        CARD19,
        f"工资卡号{CARD19}，开户行建设银行",
        group(CARD16, (4, 4, 4, 4)),
        group(CARD16, (4, 4, 4, 4), "-"),
        group(CARD19, (4, 4, 4, 4, 3)),
        group(CARD19, (6, 13)),
        full_width(CARD16),
        "\u200c".join(CARD16),
        luhn_complete("4" * 16),
    )
    + _neg(
        Category.BANK_CARD,
        BAD_CARD16,
        group(BAD_CARD16, (4, 4, 4, 4)),
        f"7{CARD19}",  # 20 digits
        CARD16[:15],
        "1234 5678 9012",
    )
)

GRADE_CASES = _pos(
    Category.GRADE,
    "张三数学考了58分",
    "李华期中总分512分，年级第35名",
    "小明的英语成绩是B-",
    "王芳这次月考排名倒数第三",
    "她数学才考了 45 分",
    "数学考了58分",
    "我儿子期末语文92分，请帮他分析一下",
    "这个学生物理只有38分",
    "他这次月考班级第5名",
    "张伟同学的期中成绩单发一下",
    "学生李明的数学成绩是112/150",
    "She scored 58 points in the math exam.",
    "她这次期末考试数学得了六十分",
    "孩子这次数学才考了六十多分",
    "王小明期中考试语文85分，数学92分，英语78分",
    "我女儿这次英语考了全班第一名",
    "刘洋同学数学成绩：58",
    "这次月考张三数学 ５８ 分，比上次低",
    "他英语成绩等级为C",
    "他数学每次都考90分",
    "孩子英语考了满分100分",
    "小红的语文成绩一直是A",
    "我儿子这学期期末总分620分，排年级第8名",
    "My son got a B in math this term.",
    "Her GPA is 3.2",
) + _neg(
    Category.GRADE,
    "本题5分",
    "每小题3分，共30分",
    "满分100分",
    "评分标准",
    "这道题占10分",
    "总分值120分的试卷",
    "出一份满分150分的数学试卷",
    "选择题每题2分",
    "三年级数学",
    "第3题",
    "第二单元",
    "考试时间90分钟",
    "90分钟",
    "我教八年级数学，以后出题都用人教版教材",
    "以后出题都用人教版",
    "试卷难度中等，满分100分",
    "请出10道选择题，每题3分",
    "帮我设计一个成绩单模板",
    "给学生出一套期中考试卷，考试时间90分钟，总分120分",
    "这次期中考试的数学试卷共有25道题，总分150分",
    "作文题40分",
    "请给这篇作文打分，满分50分",
    "英语听力部分共30分",
    "期中考试安排在第8周",
    "2023年高考数学全国卷第20题12分",
    "全班数学平均分是85分",
    "学生需要在90分钟内完成数学测验",
    "希望学生期末数学都能考到90分以上",
    "三年级数学第二单元测验卷",
    "高考数学满分150分",
    "这套数学卷子的及格线是90分",
    "年级第二次月考安排在下周",
    "数学2班的课表",
    "英语4级词汇表",
    "奖励班级前十名的学生",
    "给全班同学讲评期末考试卷",
    "按百分制给作文评分，60分及格",
    "学生们的数学作业每次10分",
    "这次考试全年级平均分78.5分，比上次提高了3分",
    "期末成绩由平时成绩30%和考试成绩70%组成",
    "请把第5题的分值从8分改成10分",
    "英语作文的评分等级分为A、B、C、D四档",
    "以前出的卷子难度偏大，学生平均只有60多分，这次简单一点",
    "请统计一下这次月考各分数段的人数分布",
    "请用小明和小红的故事出一道应用题",
)

HEALTH_CASES = _pos(
    Category.HEALTH,
    "张三患有癫痫",
    "这个学生有多动症",
    "我最近在吃抗抑郁的药",
    "她因为哮喘住院了",
    "孩子对花生过敏",
    "我有糖尿病，上课时需要备糖",
    "李明同学确诊了白血病",
    "王芳同学最近在做心理治疗",
    "他有自杀倾向",
    "小明是自闭症儿童",
    "那个学生有ADHD",
    "我儿子有读写障碍，阅读速度慢",
    "He was diagnosed with ADHD last year.",
    "她上周请了病假",
    "我最近失眠很严重",
    "他的近视原因是看手机太多",
    "他以前有哮喘",
    "班上有个学生被诊断为抑郁症",
    "陈老师住院了，这周的课我来代",
    "他身高170，体重偏胖，有高血压",
    "我最近身体不好，在吃降压药",
    "I was diagnosed with depression last year",
) + _neg(
    Category.HEALTH,
    "这首诗表达了抑郁的情绪",
    "作者借景抒发焦虑之情",
    "以'癌症'为主题的科普阅读",
    "设计一节关于预防近视的班会课",
    "生物课讲解糖尿病的成因",
    "心脏的结构与功能",
    "我想设计一节关于抑郁症预防的心理健康课",
    "如何帮助有读写障碍的学生提高阅读能力",
    "给学生讲讲过敏反应的原理",
    "学校心理咨询室的开放时间",
    "帮我给学生做一次学情诊断",
    "这份诊断性测试卷难度如何",
    "帮我出一份关于艾滋病预防的宣传材料",
    "鲁迅的作品中常常流露出抑郁的色彩",
    "讲解癌细胞的分裂方式",
    "帮我查一下糖尿病患者的饮食建议",
    "讲解一下艾滋病的传播途径，用于初二生物课",
    "设计一个关于心理健康的班会，包括如何识别抑郁情绪",
    "我不想给病人错误的诊断，应该如何避免？",
    "Lesson plan about asthma awareness for grade 7",
)

CASES: list[Case] = ID_CASES + MOBILE_CASES + CARD_CASES + GRADE_CASES + HEALTH_CASES


@pytest.mark.parametrize("case", [c for c in CASES if c.blocked], ids=lambda c: c.text[:40])
def test_positive_is_blocked(case: Case) -> None:
    hits = scan(case.text)
    assert case.category in {h.category for h in hits}, hits
    assert not is_clean(case.text)
    out = redact(case.text)
    assert out.counts.get(case.category, 0) >= 1
    assert PLACEHOLDERS[case.category] in out.text
    if case.category in (Category.ID_NUMBER, Category.MOBILE, Category.BANK_CARD):
        # The number is gone in every surface form.
        assert not re.search(r"[0-9]", unicodedata.normalize("NFKC", out.text))


@pytest.mark.parametrize("case", [c for c in CASES if not c.blocked], ids=lambda c: c.text[:40])
def test_negative_passes(case: Case) -> None:
    assert [h for h in scan(case.text) if h.category is case.category] == []


@pytest.mark.parametrize(
    "text",
    [c.text for c in CASES if not c.blocked and c.category in (Category.GRADE, Category.HEALTH)],
)
def test_teacher_phrases_are_untouched(text: str) -> None:
    assert is_clean(text)
    assert redact(text) == redline.Redaction(text=text, counts={})


def test_valid_id_that_passes_luhn_is_an_id() -> None:
    assert luhn_ok(ID_LUHN)
    assert scan(ID_LUHN) == [Hit(Category.ID_NUMBER, 0, 18)]


def test_bad_checksum_id_that_passes_luhn_may_be_a_card() -> None:
    bad = next(
        v
        for n in range(1000)
        if luhn_ok(v := bad_check(make_id(seq=f"{n:03d}"))) and id_check(v[:17]) != v[17]
    )
    assert [h.category for h in scan(bad)] == [Category.BANK_CARD]


# --------------------------------------------------------------------------------------
# Exact spans and placeholders
# --------------------------------------------------------------------------------------


def test_hit_offsets_are_in_the_original_text() -> None:
    text = f"学号Ｇ\u200b{full_width(ID[:6])} {ID[6:]}，电话+86 138-0013-8000。"
    hits = scan(text)
    g = text.index("Ｇ")
    assert hits[0] == Hit(Category.ID_NUMBER, g, text.index("，"))
    plus = text.index("+")
    assert hits[1] == Hit(Category.MOBILE, plus, len(text) - 1)
    assert redact(text).text == "学号(涉及身份证号，略)，电话(涉及手机号，略)。"


def test_grade_clause_is_redacted_with_its_neighbours() -> None:
    out = redact("李华期中总分512分，年级第35名。下次课讲函数。")
    assert out.text == "(涉及学生成绩，略)。下次课讲函数。"
    assert out.counts == {Category.GRADE: 1}


def test_health_clause_keeps_other_clauses() -> None:
    out = redact("请帮我准备明天的课件，另外张三患有癫痫，上体育课要注意")
    assert out.text == "请帮我准备明天的课件，(涉及健康信息，略)，上体育课要注意"


def test_counts_by_category() -> None:
    text = f"他身份证{ID}，手机13800138000；她数学考了58分；他有哮喘。"
    assert redact(text).counts == {
        Category.ID_NUMBER: 1,
        Category.MOBILE: 1,
        Category.GRADE: 1,
        Category.HEALTH: 1,
    }


@pytest.mark.parametrize("placeholder", list(PLACEHOLDERS.values()))
def test_placeholders_never_match(placeholder: str) -> None:
    assert is_clean(placeholder)
    assert is_clean(placeholder * 3)
    assert is_clean(full_width(placeholder))
    assert is_clean(f"身份证号{placeholder}")


def test_placeholder_does_not_lend_its_words_to_a_neighbour() -> None:
    # 身份证号 inside the placeholder is not a context word for the legacy number.
    text = f"备注{PLACEHOLDERS[Category.ID_NUMBER]}{LEGACY}"
    assert is_clean(text)


def test_redact_reaches_a_fixed_point() -> None:
    # The ID sits inside the grade clause about her: one grade span swallows it, and a
    # second pass finds nothing.
    text = f"她{ID}年级第3名"
    out = redact(text)
    assert out.text == PLACEHOLDERS[Category.GRADE]
    assert out.counts == {Category.GRADE: 1}
    assert redact(out.text) == redline.Redaction(text=out.text, counts={})


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------

_TODAY = dt.date.today()
_NEUTRAL = "春夏秋冬山水花鸟云雨风雪星河湖海草木桥城村园"
_INVISIBLES = (
    "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064"
    "\ufeff\u00ad\u202a\u202e\u2066\u2069"
)


@st.composite
def resident_ids(draw: st.DrawFn) -> str:
    region = draw(st.integers(110000, 829999))
    birth = draw(st.dates(dt.date(1900, 1, 1), _TODAY))
    seq = draw(st.integers(0, 999))
    return make_id(f"{region:06d}", birth.strftime("%Y%m%d"), f"{seq:03d}")


@st.composite
def surface_forms(draw: st.DrawFn, value: str) -> str:
    """The ID as someone might type it: grouped, full-width, split by invisibles, G-prefixed."""
    if value.endswith("X") and draw(st.booleans()):
        value = value[:-1] + "x"
    cuts = sorted(draw(st.sets(st.integers(1, len(value) - 1), max_size=6)))
    sep = draw(st.sampled_from([" ", "-", " - ", "  ", "\u3000", "\uff0d", "\u2014"]))
    pieces = [value[a:b] for a, b in zip([0, *cuts], [*cuts, len(value)], strict=True)]
    text = sep.join(pieces) if cuts else value
    if draw(st.booleans()):
        text = full_width(text)
    if draw(st.booleans()):
        chars = list(text)
        for _ in range(draw(st.integers(1, 5))):
            at = draw(st.integers(1, len(chars) - 1))
            chars.insert(at, draw(st.sampled_from(_INVISIBLES)))
        text = "".join(chars)
    if draw(st.booleans()):
        text = draw(st.sampled_from(["G", "g", "Ｇ", "G\u200b"])) + text
    return text


_cjk = st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5), max_size=20)
_neutral = st.text(st.sampled_from(_NEUTRAL), max_size=15)
_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(data=st.data(), value=resident_ids(), before=_cjk, after=_cjk)
def test_any_valid_id_in_any_form_is_blocked(
    data: st.DataObject, value: str, before: str, after: str
) -> None:
    form = data.draw(surface_forms(value))
    text = before + form + after
    assert scan(text)
    out = redact(text)
    assert out.counts  # an ID hit, or a clause hit that swallowed it
    assert not re.search(r"[0-9０-９]", out.text)
    assert is_clean(out.text)


@_FAST
@given(data=st.data(), value=resident_ids(), before=_neutral, after=_neutral)
def test_id_hit_spans_exactly_the_typed_id(
    data: st.DataObject, value: str, before: str, after: str
) -> None:
    form = data.draw(surface_forms(value))
    text = before + form + after
    assert scan(text) == [Hit(Category.ID_NUMBER, len(before), len(before) + len(form))]
    assert redact(text).text == before + PLACEHOLDERS[Category.ID_NUMBER] + after


@_FAST
@given(value=resident_ids(), extra=st.sampled_from("0123456789"), left=st.booleans())
def test_id_inside_a_longer_digit_run_is_not_an_id(value: str, extra: str, left: bool) -> None:
    if value.endswith("X"):
        value = value[:-1] + "1"
    text = extra + value if left else value + extra
    assert Category.ID_NUMBER not in {h.category for h in scan(text)}


_FRAGMENTS = [
    "张三",
    "她",
    "学生",
    "数学",
    "期末",
    "考了",
    "58分",
    "满分",
    "第3名",
    "年级第",
    "排名",
    "患有",
    "哮喘",
    "抑郁",
    "我",
    "身份证",
    "，",
    "。",
    " ",
    "-",
    "\u200b",
    "Ｇ",
    "１３８",
    "0013",
    "8000",
    LEGACY,
    ID,
    CARD16,
    "(涉及",
    "，略)",
    *PLACEHOLDERS.values(),
]
_mixed = st.lists(st.sampled_from(_FRAGMENTS), max_size=25).map("".join) | st.text(max_size=60)


@_FAST
@given(text=_mixed)
def test_redact_is_idempotent_and_clean(text: str) -> None:
    out = redact(text)
    assert is_clean(out.text)
    assert redact(out.text).text == out.text


@_FAST
@given(text=_mixed)
def test_hits_are_sorted_disjoint_and_in_range(text: str) -> None:
    hits = scan(text)
    for hit in hits:
        assert 0 <= hit.start < hit.end <= len(text)
    for a, b in itertools.pairwise(hits):
        assert a.end <= b.start


@_FAST
@given(
    before=_neutral,
    after=_neutral,
    body=st.sampled_from(["13800138000", "138 0013 8000", "138-0013-8000", "+86 13800138000"]),
    wide=st.booleans(),
    invisible=st.sampled_from(["", *_INVISIBLES]),
)
def test_mobile_hit_spans_exactly_the_typed_number(
    before: str, after: str, body: str, wide: bool, invisible: str
) -> None:
    form = full_width(body) if wide else body
    form = form[:5] + invisible + form[5:]
    text = before + form + after
    assert scan(text) == [Hit(Category.MOBILE, len(before), len(before) + len(form))]
    assert apply(text, scan(text)) == before + PLACEHOLDERS[Category.MOBILE] + after
