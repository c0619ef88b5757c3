"""The health recogniser: a condition, symptom, treatment or medical event of a person.

Three kinds of trigger:

* a **vocabulary** loaded from ``data/health_terms.txt`` (conditions, symptoms, medicines,
  treatments, pregnancy); a further list in the THUOCL format (``term<TAB>frequency``)
  can be added with ``REDLINE_MEDICAL_TERMS=/path/file`` and is curated by rule (see
  :func:`curate`);
* a **condition by its head**: a word that ends in 炎, 症, 癌, 瘤 or 综合征, or a word
  ending in 病 that the segmenter keeps whole (腮腺炎, 肠胃炎, 心脏病), minus the
  figurative words (毛病, 通病, 语病, 拖延症);
* **open cues** that need no diagnosis name: 医生说, 去了医院, 身体不舒服, 肚子疼, and the
  English words for the same.

A trigger is blocked when :func:`memory.redline.persons.subject_of` finds the person it
is about (the speaker counts: a teacher's own health is health information too).
Figures of speech (笑得肚子疼, 气出心脏病来), a hospital errand with an adult relative
or of a teacher (陪我妈去医院复查), literary uses (抒发焦虑之情), teaching topics
(关于预防近视的班会), exam items about a patient, notices to a group and class
statistics pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation, MatchKind

from memory.redline.base import (
    DATA_DIR,
    THRESHOLD,
    Anchors,
    Candidate,
    Category,
    Doc,
    Finding,
    LatinWords,
    anchored_matches,
    back,
    data_words,
    en,
    fast_compile,
    followed_by,
    words,
)
from memory.redline.persons import persons, segment, subject_of

DATA_FILE: Final = DATA_DIR / "health_terms.txt"
# The THUOCL medical list's most frequent entries are words of the field, not conditions
# (医院, 检查, 恢复, 治疗, 患者, 医生): a term of an extra list is kept only if it is rarer
# than this, or if it names a condition by its head (see _HEAD).
CURATE_MAX_FREQUENCY: Final = 2000
_HEAD: Final = ("炎", "症", "癌", "瘤", "综合征", "病", "疹", "痘", "伤", "折", "痛", "疼")


def curate(lines: Iterable[str]) -> list[str]:
    """Terms of a ``term<TAB>frequency`` list that name health matters (the documented rule).

    Kept: terms of two or more characters that end in a condition head (炎, 症, 病 …), and
    terms of three or more characters whose frequency is below
    :data:`CURATE_MAX_FREQUENCY` (the frequent ones are the generic words of the field;
    two-character terms without a head are too often parts of ordinary words, such as
    单发 in 名单发给). Dropped: single characters, anything with a digit, and the words
    that are figures of speech or generic nouns (疾病, 毛病).
    """
    kept: list[str] = []
    for line in lines:
        term, _, freq = line.strip().partition("\t")
        if len(term) < 2 or any(c.isdigit() for c in term) or term in _FIGURATIVE:
            continue
        frequency = int(freq) if freq.strip().isdigit() else 0
        if term.endswith(_HEAD) or (len(term) >= 3 and frequency < CURATE_MAX_FREQUENCY):
            kept.append(term)
    return kept


@cache
def vocabulary() -> tuple[str, ...]:
    """The health terms: the packaged list, plus a curated extra list if configured."""
    terms = list(data_words(DATA_FILE.name))
    extra = os.environ.get("REDLINE_MEDICAL_TERMS", "")
    if extra and Path(extra).is_file():
        terms += curate(Path(extra).read_text(encoding="utf-8").splitlines())
    return tuple(sorted(set(terms)))


@cache
def _terms() -> AhoCorasick:
    """The vocabulary as one automaton (leftmost-longest, like a longest-first alternation)."""
    return AhoCorasick(
        [t for t in vocabulary() if not t.isascii()],
        matchkind=MatchKind.LeftmostLongest,
        implementation=Implementation.DFA,
    )


@cache
def term_set() -> frozenset[str]:
    """The vocabulary's terms the automaton of :func:`_terms` matches (case kept)."""
    return frozenset(t for t in vocabulary() if not t.isascii())


def latin_words() -> list[str]:
    """The English health words: the vocabulary's ASCII terms and :data:`EN_TERMS`."""
    return [*(t for t in vocabulary() if t.isascii()), *EN_TERMS]


@cache
def latin_terms() -> LatinWords:
    return LatinWords(latin_words())


_ANY_LATIN_RE: Final = fast_compile("[A-Za-z]")
CUE_ANCHORS_TABLE: Final[dict[str, tuple[str, ...]]] = {
    "cue": (
        "医生",
        "大夫",
        "校医",
        "医院",
        "诊所",
        "卫生院",
        "医务室",
        "急诊",
        *("儿科", "眼科", "牙科", "口腔科", "骨科", "科说是"),
        *("皮肤科", "耳鼻喉科", "神经科", "精神科", "心理科", "心内科", "内科", "外科", "妇科"),
        *("中医科", "五官科", "呼吸科", "消化科", "内分泌科", "康复科", "肿瘤科", "血液科"),
        *("感染科", "泌尿科", "整形科", "儿童保健科", "药", "针", "胰岛素", "吊瓶", "吐了", "牙"),
        "身体",
        "舒服",
        "吊",
        "挂",
        "输",
        "长了",
        *("做检查", "做个检查", "做一系列检查", "做各种检查"),
        *("做了检查", "做了个检查", "做了一系列检查", "做了各种检查"),
        "出血",
        "切除",
        *("摔断", "摔骨折", "摔裂", "摔伤", "跌断", "跌骨折", "跌裂", "跌伤", "撞断", "撞骨折"),
        *("撞裂", "撞伤", "磕断", "磕骨折", "磕裂", "磕伤", "碰断", "碰骨折", "碰裂", "碰伤"),
        *("石膏", "拄拐", "拄着拐", "崴了", "扭了", "扭伤", "受伤", "骨折", "缝", "车祸"),
        "摘除",
        "疼",
        "痛",
        "肿",
        "发炎",
        "晕倒",
        "昏倒",
        "体温",
        "视力",
        *followed_by(("看", "看了", "看过"), ("病", "中医", "西医", "门诊")),
        *("broke", "broken", "sprained"),
    ),
}
_CUE_ANCHORS: Final = Anchors(CUE_ANCHORS_TABLE)


EN_TERMS: Final = words(
    "adhd hiv ocd ptsd autism autistic epilepsy asthma diabetes cancer leukemia depression"
    " depressed anxiety dyslexia bipolar schizophrenia anorexia hospital hospitalised"
    " hospitalized allergic allergy allergies pregnant surgery fever flu medication therapy"
    " inhaler diagnosed sick"
)
# Literals every condition-head match contains (the sentence gate of the engine).
HEAD_LITERALS: Final = ("炎", "症", "癌", "瘤", "综合征", "病")
_HEAD_RE: Final = fast_compile(r"(?:炎|症|癌|瘤|综合征|病)(?![毒菌句])")
# Words with a condition's head that name no condition: figures of speech and the
# generic nouns of the field (疾病 is "illness" in general, not anyone's diagnosis).
_FIGURATIVE: Final = frozenset(
    words(
        "毛病 老毛病 通病 语病 弊病 心病 职业病 拖延症 懒癌 懒病 富贵病 公主病 王子病 中二病"
        " 病句 症结 对症 炎热 炎黄 疾病 诟病 传染病 慢性病 常见病 多发病 流行病 后遗症 并发症"
    )
)
_CUE_RE: Final = fast_compile(
    r"(?:医生|大夫|校医)(?:说|讲|让|建议|诊断|开了)|(?:去|到|上|在|进|送|送到|跑)了?(?:医院|诊所|卫生院"
    r"|医务室|急诊|儿科|眼科|牙科|口腔科|骨科)|身体(?:不舒服|不好|不适|出了问题|很差|很虚|虚弱|欠佳)"
    r"|(?:去|到|在|看了?|挂了?)(?:了|个)?(?:皮肤|耳鼻喉|神经|精神|心理|心内|内|外|妇|眼|牙|骨|中医|五官|呼吸"
    r"|消化|内分泌|康复|肿瘤|血液|感染|泌尿|整形|儿童保健)科"
    # Taking or being given medicine: 吃一次药, 涂了点药膏, 打了两针, 打胰岛素.
    r"|(?:吃|服|用|涂|抹|擦|滴|喷)(?:了|着|过)?(?:[一两三四五六七八九十几半]+[次片粒颗支瓶袋顿种]|点|些)?"
    r"(?:中|西|消炎|退烧|止痛|止咳|感冒|过敏|抗生素|头孢|降压|眼|[\u4e00-\u9fff]{1,3}的)?"
    r"(?:药|药膏|药水|药片)(?![物品店房师学材])"
    r"|打(?:了|过)?[一两三几]?针|打胰岛素|打吊瓶"
    # Vomiting said of someone (not 吐了口气, 吐槽), a tooth pulled or filled.
    r"|(?:又|昨晚|晚上|早上|半夜|一直|老是|还)吐了(?!口|槽|出|舌|个)|吐了(?:好几次|一晚上|[一两三几]次)"
    r"|(?:拔|补)了?[一两三几0-9]?颗?牙"
    r"|[\u4e00-\u9fff]{1,3}科说是|(?:医院|医生|大夫)说是|(?:吊|挂|输)了?[^,。!?;]{0,4}?[水液]"
    r"|长了个?(?:东西|瘤子|包块|肿块|疙瘩)|(?:在|去|要)做(?:个|一系列|各种)?检查|做了(?:个|一系列|各种)?检查"
    r"|(?:老|总|经常|又)出血|切除|摘除|(?:摔|跌|撞|磕|碰)(?:断|骨折|裂|伤)|打着?石膏|拄着?拐"
    r"|缝了?(?:[一两三四五六七八九十几0-9]+)?针|出了?车祸|(?:头|肚子|胃|牙|腿|腰|嗓子|喉咙|眼睛|耳朵|胸口|脚|脸|手|膝盖|手腕|脚踝|嘴|牙龈|鼻子|背|脖子"
    r"|肩膀)(?:很|特别|有点|一直|老是)?(?:疼|痛|肿"
    r"|发炎|不舒服|出血|崴了|扭了|扭伤|受伤|骨折)|晕倒|昏倒"
    r"|(?:broke|broken|sprained) (?:his|her|my) (?:arm|leg|ankle|wrist|finger|foot|nose|collarbone)"
    r"|(?<![A-Za-z])(?:a|his|her|my) (?:broken|sprained) (?:arm|leg|ankle|wrist|finger|foot|nose"
    r"|collarbone)"
    # A measured temperature, a visit to a doctor, a tooth knocked out.
    r"|体温\s*(?:[0-9]{2}(?:\.[0-9])?|三十[六七八九]|四十)"
    # Failing eyesight needs no diagnosis: 视力下降, 视力只有4.6, 视力降到四点六.
    r"|视力(?:明显|突然|一直|又|也|有点|有些|急剧|越来越)?(?:下降|下滑|变差|减退|不好|很差|不行|差了)"
    r"|视力(?:只有|才|降到|掉到|下降到|是)\s*(?:[0-9]\.[0-9]|[四五]点[0-9零一二三四五六七八九])"
    r"|看(?:了|过)?(?:牙医|医生|大夫|病|急诊|中医|西医|门诊)(?![生人])"
    r"|牙(?:齿)?(?:被)?(?:磕|摔|撞|碰)(?:掉|断|坏|破|松)|(?:磕|摔|撞|碰)(?:掉|断|坏|破)了?[一两半]?颗?门?牙"
)
# Literary or emotional use: 表达了抑郁的情绪, 抒发焦虑之情.
_LITERARY_BEFORE_RE: Final = fast_compile(
    r"表达|抒发|表现|体现|描写|刻画|渲染|烘托|流露|透露|传达|营造|充满|寄托|基调"
)
_LITERARY_AFTER_RE: Final = fast_compile(
    r"的?\s*(?:情绪|心情|之情|情感|氛围|色彩|基调|情怀|气氛|意境|心境|情调|意象|风格|诗|词|文学)"
)
# A teaching topic rather than a person's condition: 关于预防近视的班会课, 糖尿病的成因.
_TOPIC_BEFORE_RE: Final = fast_compile(
    r"关于|预防|防治|科普|讲解|讲述|介绍|了解|认识|什么是|如何|怎样|针对|应对|识别|主题|话题"
    r"|宣传|远离|避免|防范|有关|以\s*[\"'“‘《「]|讲讲|讨论|研究|探究|常见|讲了|讲的是|论文"
    # a general claim of cause: 挑食容易导致营养不良
    r"|(?:容易|会|可能|易)(?:导致|引起|造成|诱发)"
)
_TOPIC_AFTER_RE: Final = fast_compile(
    r"成因|原因(?!是)|症状|表现|预防|防治|知识|科普|危害|机制|原理|定义|分类|特点|讲座|主题|班会|宣传"
    r"|课(?!上|前|后)|教育|相关|患者|病人|病例|案例|急救|常识|手抄报|宣讲|是什么|为主题|细胞|科学"
    r"|行为|言论|病毒|传播|怎么|反应的原理|室"
)
# Education senses of words in the lexicon: 学情诊断, 诊断性测试.
_EDU_SENSE_BEFORE_RE: Final = fast_compile(
    r"(?:学情|教学|学业|错因|错题|故障|课堂|考试|作业|知识|问题)$"
)
_EDU_SENSE_AFTER_RE: Final = fast_compile(r"性|测|卷|练|题|评价|分析|报告单?(?:显示|上)")
_EDU_SENSE_TERMS: Final = frozenset({"诊断", "确诊"})
# A mood word used for a passing feeling, not a condition: 感到非常焦虑, 很焦虑吗.
_MOOD_TERMS: Final = frozenset(words("焦虑 抑郁 忧郁 紧张 失眠 头疼 头痛 恶心"))
_FEELING_BEFORE_RE: Final = fast_compile(
    r"(?:感到|感觉|觉得|显得|让人|让我|让他|让她|让你|使人|令人|好|很|非常|十分|有点|有些|太|极度|特别"
    r"|更加|更|和|与|或)\s*(?:非常|很|十分|有点|有些|极度|特别|更加|更)?$"
)
_FEELING_AFTER_RE: Final = fast_compile(r"感|情绪|的情绪|的心情|不安|随之|吗|呢")
# A specific person owns the condition directly: 他的近视, 我有哮喘, 女儿一直过敏. This
# wins over a topic word (他的近视原因是…).
_DIRECT_OWNER_RE: Final = fast_compile(
    r"(?:(?<![其吉])他|她|(?<![帮给为替让请和跟与])我|儿子|女儿|该生)(?:们)?(?:同学)?"
    r"(?:的|有|也有|还有|患|一直有|从小有|有点|有些|最近有点|最近|一直|经常|总是|因|因为)?\s*$"
)
_DIAGNOSIS_RE: Final = fast_compile(
    r"确诊|诊断为|诊断出|被诊断|查出|检查出|患有|患上|患了|得了|病史|在吃|在服|服用|正在治疗"
    r"|接受治疗|住院治疗|发作|复发|" + en("diagnosed", "suffer from", "suffers from", "treated for")
)
# Words for a medical act rather than a condition, when used as a noun of medicine.
# A symptom as the result of a feeling or an effort is a figure of speech: 笑得肚子疼,
# 气出心脏病来, 难吐血了, 累得头疼.
_HYPERBOLE_BEFORE_RE: Final = fast_compile(
    r"(?:(?:笑|乐|气|累|哭|忙|难|急|吓|馋|困|吵|烦|饿|撑|逗)(?:得|到|出|死|成)|(?<![困艰])难)"
    r"(?:我|他|她|人|我们|大家)?(?:都|快|要|快要)?$"
)
_JEST_RE: Final = fast_compile(r"开玩笑|开个玩笑|说笑|夸张了|(?<![A-Za-z])(?:jk|lol)(?![A-Za-z])")
# A hospital errand (a visit, a check-up, medicine to fetch) of an adult: a teacher (张老师
# 去医院复查) or an adult relative the speaker goes with (我下午陪我妈去医院复查). No
# pupil's health is said. The speaker's own visit stays health (我明天去医院看牙: the
# development set labels it so), as does a condition named with it.
_ERRAND_RE: Final = fast_compile(
    r"医院|诊所|卫生院|医务室|门诊|急诊|复查|复诊|体检|检查|看病|看医生|拿药|开药|挂号|拍片|理疗"
    r"|疫苗|就医|科"
)
_ADULT_KIN: Final = (
    "妈|爸|妈妈|爸爸|母亲|父亲|老妈|老爸|婆婆|公公|岳母|岳父|丈母娘|老公|老婆|爱人|媳妇|丈夫"
    "|妻子|奶奶|爷爷|姥姥|姥爷|外婆|外公|老人|家里老人|父母|爸妈"
)
_WITH_ADULT_RE: Final = fast_compile(
    rf"(?:陪|带|送|接|陪着|带着)(?:我|他|她|你|咱)?(?:的|家)?(?:{_ADULT_KIN})"
)
_ADULT_TITLES: Final = ("老师", "校长", "主任", "阿姨", "叔叔", "师傅")
_WEAK_TERMS: Final = frozenset(words("诊断 确诊 手术 住院 服药 吃药 心理咨询 心理治疗 病假 化疗"))
_WEAK_MODIFIER_RE: Final = fast_compile(r"的$|医疗$|医学$|临床$|正确$|错误$|准确$|必要$")


def _token_at(doc: Doc, pos: int) -> tuple[int, int, str] | None:
    """The word whose last characters hold ``pos``: the segmenter's token covering it, or,
    when that token is a bare condition head (瘤, 炎), the noun before it and the head
    (甲状腺 + 瘤). The sentence is segmented once (cached)."""
    lo, hi = doc.sentence(pos)
    at = lo
    previous: tuple[int, str, str] | None = None
    for word, tag in segment(doc.text[lo:hi]):
        if at <= pos < at + len(word):
            if len(word) == 1 and previous is not None and previous[2] in _BODY_TAGS:
                return previous[0], at + 1, previous[1] + word
            return at, at + len(word), word
        previous = (at, word, tag)
        at += len(word)
    return None


def _cut_through(doc: Doc, start: int, end: int) -> str:
    """The segmenter's word that starts inside [start, end) and goes on past its end (看看
    + 病句 cut through 看病): the match is then no word of the sentence. Only that edge
    counts: the segmenter often joins a name's last character to the word after it
    (覃思 + 远去 + 医院, where 覃思远 is the name), and a word overlapping a person reference
    is never held against the match. Empty when there is none."""
    lo, hi = doc.sentence(start)
    at = lo
    for word, _ in segment(doc.text[lo:hi]):
        a, b = at, at + len(word)
        at = b
        if a >= end:
            break
        if start < a < end < b and not any(r.start < b and a < r.end for r in persons(doc, lo, hi)):
            return word
    return ""


# The segmenter's tags of a noun a bare condition head can attach to (甲状腺 is "l").
_BODY_TAGS: Final = frozenset({"n", "ng", "nz", "l"})


class HealthRecogniser:
    category = Category.HEALTH

    def find(self, doc: Doc) -> list[Candidate]:
        text = doc.text
        terms = (
            [(s, e) for _, s, e in _terms().find_matches_as_indexes(text)]
            if doc.terms is None
            else doc.terms
        )
        out = [Candidate(s, e, "term") for s, e in terms]
        out += [Candidate(m.start(), m.end(), "head") for m in _HEAD_RE.finditer(text)]
        anchored = _CUE_ANCHORS.positions(text) if doc.anchors is None else doc.anchors
        cues = (
            list(_CUE_RE.finditer(text))
            if anchored is None
            else anchored_matches(doc, _CUE_RE, anchored.get("cue"))
        )
        out += [Candidate(m.start(), m.end(), "cue") for m in cues]
        if doc.latin_terms is not False and _ANY_LATIN_RE.search(text):
            out += [Candidate(s, e, "term") for s, e in latin_terms().spans(text)]
        return out

    def validate(self, doc: Doc, candidate: Candidate) -> bool:
        text = doc.text
        if candidate.kind != "head":
            return True
        token = _token_at(doc, candidate.start)
        if token is None:
            return False
        t_start, t_end, word = token
        # The head must end the word, and the word must be more than the head.
        if t_end != candidate.end or len(word) < 2 or word in _FIGURATIVE:
            return False
        if word.startswith(("病", "症")):
            return False
        doc_word = text[t_start:t_end]
        return doc_word not in _FIGURATIVE

    def score(self, doc: Doc, candidate: Candidate) -> Finding:
        text = doc.text
        start, end = candidate.start, candidate.end
        if candidate.kind == "head":
            token = _token_at(doc, start)
            if token is not None:
                start = token[0]
        lo, hi = doc.sentence(start)
        term = text[start:end]

        def finding(score: float, *reasons: str) -> Finding:
            lo, hi = doc.clause_span(start, end) if score >= THRESHOLD else (start, end)
            return Finding(Category.HEALTH, lo, hi, score, reasons, term)

        if _LITERARY_BEFORE_RE.search(text, max(lo, start - 6), start) or _LITERARY_AFTER_RE.match(
            text, end, min(hi, end + 6)
        ):
            return finding(0.0, "a literary or emotional use")
        if term in _MOOD_TERMS and (
            _FEELING_BEFORE_RE.search(text, max(lo, start - 6), start)
            or _FEELING_AFTER_RE.match(text, end, hi)
        ):
            return finding(0.0, "a passing feeling, not a condition")
        if term in _EDU_SENSE_TERMS and (
            _EDU_SENSE_BEFORE_RE.search(text, max(lo, start - 4), start)
            or _EDU_SENSE_AFTER_RE.match(text, end, hi)
        ):
            return finding(0.0, "an education sense (学情诊断)")
        if _HYPERBOLE_BEFORE_RE.search(text, max(lo, start - 6), start) or _JEST_RE.search(
            text, lo, hi
        ):
            return finding(0.0, "hyperbole or a joke (笑得肚子疼)")
        c_lo, c_hi = doc.clause(start)
        errand = _ERRAND_RE.search(term) is not None
        if errand and _WITH_ADULT_RE.search(text, c_lo, start):
            return finding(0.1, "an errand with an adult relative (陪我妈去医院)")
        direct = _DIRECT_OWNER_RE.search(text, max(lo, start - 8), start) is not None
        if not direct:
            if _TOPIC_BEFORE_RE.search(text, max(c_lo, start - 8), start) or _TOPIC_AFTER_RE.match(
                text, end, min(c_hi, end + 8)
            ):
                return finding(0.1, "a teaching topic")
            if term in _WEAK_TERMS and _WEAK_MODIFIER_RE.search(text, max(c_lo, start - 2), start):
                return finding(0.1, "a noun of medicine (正确的诊断)")
        subject = subject_of(doc, start, end, self_counts=True)
        if subject.generic or subject.person is None:
            return finding(0.2, f"generic: {subject.generic}")
        if candidate.kind != "head" and (word := _cut_through(doc, start, end)):
            return finding(0.1, f"part of another word ({word})")
        who = text[subject.person.start : subject.person.end]
        if errand and who.endswith(_ADULT_TITLES):
            return finding(0.2, f"an adult's errand ({who})")
        score = subject.weight
        diagnosed = _DIAGNOSIS_RE.search(text, back(text, start, lo), min(hi, end + 6))
        if diagnosed:
            score = min(1.0, score + 0.1)
        return finding(score, f"{candidate.kind} ({term})", f"about {who} ({subject.person.kind})")
