"""Who is meant: person references in a sentence, and whether a statement is generic.

Grades and health are on the red line only when they are about an identifiable person.
This module finds the references to people in a sentence and judges the subject of a
statement. It combines a Chinese segmenter with rules:

* **Names** come from rjieba (the jieba-rs binding; MIT; its dictionary and HMM model
  ship inside the wheel, so it works offline): tokens it tags as person names (``nr``,
  ``nrfg``, ``nrt``), a one-character surname token it tags ``nr`` followed by a given
  name it did not recognise (笪 + 浩然), and a bracketed real name after a nickname.
  A name that is itself an entry of the segmenter's dictionary (鲁迅, 林黛玉) is a public
  figure or a character; it counts only when the sentence also places it in school life
  (这次, 期末, 同学 …). Private people are rarely dictionary words.
* **A given name heading a clause** without its surname (可欣这次…, 俊豪视力…), whatever
  part of speech the segmenter guessed: its name model is asked by putting a probe
  surname before the pair (王 + 可欣 → 王可欣/nr); a verb, numeral or exam word it made of
  the pair (小测, 高二) is none, and what follows must be what follows a subject.
* **Latin names** (Tom, Lily): a capitalised word that is not a common English word.
* **Seat numbers** (12号同学, 学号17的同学), **role nouns** (我家孩子, 那个女生, 班长,
  课代表, 同桌), **pronouns** (他, 她, TA, he, she) and the speaker (我, for health).
* **"X对…"**: an unknown word heading a clause before 对 (佘明远对芒果过敏).

The subject is *generic* — and the statement passes — when the sentence is about a
text under study or fiction (《…》, 课文, 小说, 主人公), a hypothesis or a wish (如果,
希望, 预防), an exam item's patient (患者, 某同学, 甲同学), a relative clause addressed
to a group (有哮喘的同学…, 不及格的同学…, reaching across an enumeration's 、), or a
group, team or class statistic (全班, 接力队, 及格率, 12人, 这届学生, 这帮孩子). A bare word
for pupils or teachers (学生, 儿童, 老师) is a class of people or the addressee: it takes
the subject's place but identifies nobody (``NOBODY``), unless a singular classifier makes
it someone (有个学生) or a surname heads the title (方老师).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Final

import rjieba

from memory.redline.base import Doc, data_words, fast_compile, words

__all__ = [
    "GROUP_RE",
    "PersonRef",
    "Subject",
    "forget_sentences",
    "persons",
    "segment",
    "subject_of",
]


@dataclass(frozen=True, slots=True)
class PersonRef:
    """A reference to a person, in view offsets; ``weight`` is how identifiable it is."""

    start: int
    end: int
    kind: str
    weight: float


@dataclass(frozen=True, slots=True)
class Subject:
    """Who a statement is about: the reference (if any) and why it is generic (if it is)."""

    person: PersonRef | None
    generic: str  # empty when the statement is about ``person``

    @property
    def weight(self) -> float:
        if self.generic or self.person is None:
            return 0.0
        return self.person.weight


_CJK: Final = "\u4e00-\u9fff"
_NAME_TAGS: Final = frozenset({"nr", "nrfg", "nrt"})
_SURNAME_TAGS: Final = frozenset({"nr", "zg"})
# Tokens the segmenter's dictionary tags as names but that are common words in our
# texts (found by measurement on the development set, not a surname list).
_NOT_NAMES: Final = frozenset(
    words("过敏 封建礼教 明白 文明 高明 光明 黎明 时光 英明 高一 高二 高三 初一 初二 初三")
)
# The segmenter sometimes tags "很可爱" or "此问题" as a name; a name never starts with
# an adverb or a demonstrative.
_NOT_NAME_FIRST: Final = frozenset("很此这那太最更都也就还才又再好真挺让被把")
# Kinship words are people, but not someone a memory could identify: weak references.
_KINSHIP: Final = frozenset(
    words("妈妈 爸爸 奶奶 爷爷 姥姥 姥爷 哥哥 姐姐 弟弟 妹妹 叔叔 伯伯 舅舅 婶婶")
)
# Given-name tokens that are grammar, not names, after a surname-like character.
_FUNCTION_TAGS: Final = frozenset(
    {"p", "c", "u", "uj", "ul", "ud", "uz", "ug", "uv", "y", "e", "o", "x", "m", "q", "r", "f"}
)

# A capitalised Latin word that is a common English word is not a name.
_EN_COMMON: Final = frozenset(
    words(
        "the this that these those he she it they we you i my his her our their its a an in"
        " on at for from to with by about after before when while if and but or so not no"
        " yes please lesson unit chapter grade class test exam exams quiz math maths english"
        " chinese physics chemistry biology history geography science music art pe final"
        " midterm homework teacher teachers student students mr mrs ms miss dr monday tuesday"
        " wednesday thursday friday saturday sunday january february march april may june"
        " july august september october november december good great nice ok hello hi dear"
        " thanks thank today tomorrow yesterday here there what why how who where which"
        " write read answer question choose fill keep make let use design create give find"
        " check note remember plan review practice whatsapp wechat ppt word excel gpa id"
        " ta qq ai is are was were be has have had do does did can could will would should"
        " must also all any each every some many much more most very just only one two three"
        " first last next part section reading writing listening speaking story poem text"
        " book page level term school course subject subjects score scores result results"
        " report card hospital doctor asthma adhd covid assistant user system"
    )
)
# (a capitalised word before a colon is a heading: "Objectives:", "Steps:")
_LATIN_NAME_RE: Final = fast_compile(r"(?<![A-Za-z])[A-Z][a-z]{1,12}(?![A-Za-z]|\s*:)")

_PRONOUN_RE: Final = fast_compile(
    r"(?<![其吉])他(?![们人乡国日处者])|她(?!们)|(?<![A-Za-z])TA(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Hh]im)(?![A-Za-z])"
)
# "帮我查一下…" is the teacher asking, not owning what follows.
_SELF_RE: Final = fast_compile(
    r"(?<![帮给为替让请和跟与])我(?![国校市省区县们班院系部])|(?<![A-Za-z])(?:I|[Mm]y|me)(?![A-Za-z])"
)
_KIN: Final = (
    "孩子|娃|闺女|儿子|女儿|小子|那小子|丫头|宝贝|老大|老二|老三|外甥女?|侄子|侄女|孙子|孙女"
    "|外孙女?|[表堂](?:弟|妹|哥|姐)|弟弟|妹妹"
)
_ROLE_NOUNS: Final = "学生|同学|孩子|男生|女生|男孩|女孩|小朋友|转学生|插班生|新生|娃|丫头|小子"
_ROLE_RE: Final = fast_compile(
    rf"(?:我|俺|咱)(?:们)?家(?:的)?(?:{_KIN})|(?:我|俺|咱)的?(?:{_KIN})"
    # A parent's "our family" is the child: 我家欣怡, 我们家的数学, 你家丫头, 俺家崽.
    r"|(?:我|俺|咱|你|您)(?:们)?家(?![里附楼门长乡人庭务具电网族境事])(?=的|[\u4e00-\u9fff])"
    # (no numeral, 些 or 们 inside: 这次有两个同学, 这些学生 are groups)
    # (nor a group's classifier: 这帮熊孩子, 这届学生, 那群小朋友)
    rf"|(?:这|那|该|此)(?![帮届群批伙拨类种班级些])(?:个|位|名)?"
    rf"(?:(?![一二两三四五六七八九十几些们每有是都])[{_CJK}]){{0,6}}?"
    rf"(?:{_ROLE_NOUNS})"
    # After a singular classifier, a seat in the modifier is where the pupil sits, not a
    # count (那个坐最后一排的男生, 那位第三组的同学); without one, 这一排的学生 is a group.
    rf"|(?:这|那)(?:个|位|名)(?:(?![二两三四五六七八九十几些们每有是都])[{_CJK}]"
    rf"|[一二三四五六七八九十]+(?=[排行列组桌]))"
    rf"{{0,8}}?(?:{_ROLE_NOUNS})"
    r"|该生|此生|儿子|女儿|闺女|丫头(?!们)"
    r"|(?<![A-Za-z])(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er) (?:son|daughter|kid|child|boy|girl)(?![A-Za-z])"
    r"|副?班长|[学体文劳宣纪]\S?委员|[\u4e00-\u9fff]{0,2}课代表|小?组长|团支书|同桌|室友|舍友"
    r"|转学生|插班生"
)
# Bare 孩子 in a parent's or teacher's remark usually means one child, but weakly; a bare
# 学生 or 老师 names nobody (_CLASS_NOUNS).
_WEAK_RE: Final = fast_compile(
    r"孩子|学生|宝宝|小孩|儿童|老师|(?<!娃)娃(?!娃)|崽|student|kid|child", re.IGNORECASE
)
# Words for a pupil or a teacher in general (学生容易失分, 儿童哮喘, 老师，请问…): a class of
# people or the addressee, never by themselves the person a statement is about.
_CLASS_NOUNS: Final = frozenset({"学生", "儿童", "老师", "student"})
# …unless a singular classifier makes it someone: 有个学生, 一位老师, 班上一名学生.
_ONE_OF_RE: Final = fast_compile(
    r"(?:有|一)(?:个|位|名)$|(?<![每哪各这那几某两三四五六七八九十百0-9])(?:个|位)$"
)
# Below THRESHOLD: a reference that takes the subject's place but identifies nobody.
NOBODY: Final = 0.3
_SEAT_RE: Final = fast_compile(
    r"(?:学号\s*)?[0-9]{1,2}\s*号(?:同学|学生|男生|女生|小朋友)"
    r"|学号\s*[0-9]{1,3}(?:的)?(?:同学|学生)?"
    rf"|(?:(?<![{_CJK}0-9])|(?<=班里)|(?<=班上)|(?<=组))[0-9]{{1,2}}\s*号"
    r"(?![楼线床门房馆车路口单码位栋层下上晚前之以开截交放考到~-])"
)
# One character heading a clause before a title is a surname: 方老师, 季同学.
_TITLE_RE: Final = fast_compile(rf"(?:^|(?<=[,:;\s]))([{_CJK}])(?:老师|同学)")
_NOT_SURNAME: Final = frozenset(
    "这那哪每各该本某我你他她男女新老好小大的是和跟与给对向找请问让被把由众"
)
_BRACKET_RE: Final = fast_compile(rf"[(（]([{_CJK}]{{2,4}}|[A-Z][a-z]{{1,12}})[)）]")
# An unknown word heading a clause right before 对: 佘明远对芒果过敏.
_X_DUI_RE: Final = fast_compile(rf"(?:^|(?<=[,:;\s]))([{_CJK}]{{2,4}}?)对")
_NICK_RE: Final = fast_compile(rf"(?:小|阿)[{_CJK}]|([{_CJK}])\1")
_NICK_TAGS: Final = frozenset({"nr", "nrfg", "nrt", "nz", "z", "n"})
_NICK_STOP: Final = frozenset(
    words(
        "小学 小题 小组 小时 小测 小考 小节 小结 小说 小数 小孩 小朋 小班 小升 小初 小心 小字"
        " 小到 小于 小区 小卖 小草 小树 小鸟 小狗 小猫 小吃 小事 小明 小红 阿姨"
    )
)
# A school-life anchor that makes a dictionary name (王小明, 孙悦) a real pupil.
_SCHOOL_LIFE_RE: Final = fast_compile(
    r"这次|上次|这学期|本学期|上学期|期中|期末|月考|周测|最近|昨天|今天|明天|上周|下周|同学|班里"
    r"|班上|我家|家长|老师|考了|住院|请假|成绩|报告册|成绩单|素质报告|评语|作业"
    r"|中考|高考|补考|模拟考|模考|测验|小测|单元测|听写|默写|家长会|班主任"
)

# --------------------------------------------------------------------------------------
# Generic subjects
# --------------------------------------------------------------------------------------

_FICTION_RE: Final = fast_compile(
    r"《|课文|文中|小说|主人公|主角|作者|诗人|诗中|名著|人物形象|故事|情节|剧中|电影|童话|寓言"
    r"|传记|原文|这首诗|这篇文章|书中|书里|作品|角色|成语|典故|素材|名人|事迹"
    r"|(?<![A-Za-z])(?:[Nn]ovel|[Nn]ovels|[Ff]iction|[Pp]rotagonist|[Nn]arrator|[Cc]hapter"
    r"|[Cc]haracter|[Cc]haracters|[Pp]oem|the book|the author|the story)(?![A-Za-z])"
)
_HYPOTHETICAL_RE: Final = fast_compile(
    r"如果|(?<![例比假譬正])如(?=孩子|学生|同学|有|出现|发现|遇|您的|你的)|假如|假设|万一|要是|若是|倘若|一旦|希望|争取|目标|力争|防止|避免|预防|以免"
    r"|会不会|能不能|是否|不想|不要|不会|免受|害怕|怕|担心"
    r"|(?<![A-Za-z])(?:if|whether)(?![A-Za-z])"
)
# A question about someone presupposes what it asks about (为什么李华又不及格 says he
# failed); asked about nobody in particular, it is a general question.
_QUESTION_RE: Final = fast_compile(r"怎么办|如何|怎样|为什么|为啥|怎么回事|是不是")
# The nearest subject is an animal or a thing: 小狗发烧了, 它生病了.
_NONHUMAN_RE: Final = fast_compile(
    r"(?<![对吃把给喂和跟])(?:它|它们|狗|猫|宠物|小狗|小猫|狗狗|猫咪|鱼|鸟|兔子|仓鼠|乌龟|花(?![生粉椒])"
    r"|植物|树)(?:[^,;。!?]{0,4})$"
)
_EXAM_ITEM_RE: Final = fast_compile(
    r"患者|病人|病例|病患|某人|某患者|某同学|某学生|某生|某位|[甲乙丙丁](?:同学|某|学生)"
    r"|[甲乙丙丁]\s*[、,和与]\s*[甲乙丙丁]|已知"
    # an item's question: 这属于哪种免疫, 下列说法正确的是
    r"|属于哪|属于什么|下列|以下哪|正确的是|错误的是"
    r"|(?<![A-Za-z])(?:a patient|the patient|patients)(?![A-Za-z])"
)
# A request to write an item, or an item's label, before the people it names.
_AUTHORING_RE: Final = fast_compile(
    r"(?:出|编|设计|写|生成|改编|命)(?:一|两|三|几|[0-9]+)?(?:道|个|组|套)?[^,。!?;]{0,6}?题"
    r"|(?:应用题|例题|练习题|题目|试题|选择题|填空题|判断题|解答题|材料题|情景题|阅读题|原题)\s*[:]"
    r"|(?<![A-Za-z])(?:word problem|write a question)(?![A-Za-z])"
    # A dialogue or a story being written: its people are characters too (编一个小对话：Tom…).
    r"|(?:编|写|设计|创作|续写|改写)(?:一|两|几)?(?:个|段|篇|则)?[^,。!?;]{0,6}?"
    r"(?:对话|故事|情景剧|小品|剧本|短剧)"
    r"|(?i:(?<![A-Za-z])(?:write|create|make up) an? (?:short )?(?:dialogue|story|role-?play))"
)
GROUP_RE: Final = fast_compile(
    r"全班|全年级|全校|全体|大家|同学们|学生们|孩子们|各位|所有|每个|每位|每一位|有的|有些"
    # (部分 of people, not of a paper: 部分同学, but 听力部分)
    r"|(?:大|一|小)?部分(?=同学|学生|孩子|人|家长|的)|大部分|一部分|多数|少数|一些|这届|整体|平均|人数|及格率|优秀率|合格率|升学率|近视率|肥胖率|[0-9]+人"
    r"|[一二三四五六七八九十几]+个?人|我们班|我班|本班|[0-9一二三四五六七八九十]+班(?![长主])"
    r"|班级(?![第前排倒])|家长们|各位家长|全体家长|接力队|篮球队|足球队|代表队|[一-龥]{0,2}队(?![长员])|小组|我们组|团体|我校"
    r"|(?<![A-Za-z])(?:class average|everyone|all students)(?![A-Za-z])"
)
# A class or a year before a superlative or a rank is where the person stands, not who the
# statement is about: 她期末语文全班最高分, 他年级第五.
_CLASS_SCOPE_RE: Final = fast_compile(r"全班|全年级|全校|班级|我们班|本班|我班")
_RANKED_AFTER_RE: Final = fast_compile(
    r"\s*(?:最|第|倒数|排名|排第|前\s*[0-9一二三四五六七八九十]|数一数二|唯一|垫底|吊车尾|中下游|中上游)"
)
# A bare 学生/孩子 that is a group or the object of the teacher's action is nobody in
# particular: 每个学生, 大部分学生, 给学生出题, 让孩子复习.
_GOVERNED_RE: Final = fast_compile(
    r"(?:给|为|让|帮|替|教|对|向|带|带领|要求|指导|辅导|请|叫|组织|安排|鼓励|提醒|通知|告诉|督促"
    r"|全体|所有|每个|每位|每一个|各位|多数|部分|很多|一些|有些|有的|哪些|适合|面向|针对|大部分"
    r"|这届|我校|本校|全校|全班|初中|高中|小学|中学|这些|那些|这批|那批|这几个|那几个"
    # a group's classifier and its modifier: 这帮熊孩子, 那群小学生
    r"|(?:这|那)(?:帮|群|伙|届|批|拨)[\u4e00-\u9fff]{0,2}"
    # children in general (现在的孩子, 许多学生) and the object of advice (留意孩子的视力)
    r"|现在|如今|现今|当今|这年头|时下|许多|好多|不少|大多数|大多|普通|一般|留意|关注|观察|监督"
    r")的?$"
)
# A rate or a count right after the trigger: 近视率, 不及格人数.
_STATISTIC_AFTER_RE: Final = fast_compile(r"\s*(?:率|人数|比例|的人数|的比例|的学生人数)")
# Where a noun phrase ends: a clause delimiter other than the enumeration comma 、.
_PHRASE_END_RE: Final = re.compile(r"[,:;]")
# A relative clause addressed to a group: 有哮喘的同学…, 不及格的同学请…
_RELATIVE_RE: Final = fast_compile(
    r"的(?:同学|学生|孩子|人|小朋友|家长|老师|学员|班级|班|学校|年级)"
    r"(?!的|家长|名字|在|是[^的]{0,6}的|主任|长)"
)


@lru_cache(maxsize=4096)
def segment(sentence: str) -> tuple[tuple[str, str], ...]:
    """The segmenter's (word, part-of-speech) pairs of a sentence (bounded cache: summaries
    and facts are scanned again when they are injected)."""
    return tuple(rjieba.tag(sentence))


@lru_cache(maxsize=1 << 14)
def word_tags(word: str) -> tuple[tuple[str, str], ...]:
    """The segmenter's pairs of a word or of a probe of a few characters (王 + 可欣): a
    fact of its dictionary and model, not of a text, so it stays cached when the sentence
    caches are forgotten (a word recurs across texts that share no sentence)."""
    return tuple(rjieba.tag(word))


# The tags a name token can have; a nickname (小X, 阿X, XX) may also be a noun.
_PERSON_TAGS: Final = _SURNAME_TAGS | _NAME_TAGS


def _segmenter_names(sentence: str, base: int) -> list[PersonRef]:
    tags = segment(sentence)
    # Only the tokens one of the branches below can take (most tokens of a sentence are
    # neither tagged a name nor shaped like a nickname). The helpers are asked only for
    # tokens of the length they accept (one character; two or three for an unknown word):
    # a call per helper and token cost most of this function.
    picks = [
        i
        for i, (word, tag) in enumerate(tags)
        if tag in _PERSON_TAGS
        or (len(word) == 2 and (word[0] in "小阿" or word[0] == word[1]))
        or (
            len(word) == 1
            and (
                _doubled_given_name(tags, i)
                or _split_pet_name(tags, i)
                or _split_diminutive(tags, i)
            )
        )
        or (2 <= len(word) <= 3 and _unknown_word_heading_a_clause(tags, i))
    ]
    if not picks:
        return []
    refs: list[PersonRef] = []
    offsets = list(accumulate((len(word) for word, _ in tags), initial=0))
    school_life: bool | None = None
    for i in picks:
        word, tag = tags[i]
        start, pos = offsets[i], offsets[i + 1]
        if word in _NOT_NAMES or word[0] in _NOT_NAME_FIRST:
            continue
        nxt, nxt_tag = tags[i + 1] if i + 1 < len(tags) else ("", "x")
        if (
            tag in _SURNAME_TAGS
            and len(word) <= 2
            and word not in _DOUBLED_WORDS  # 谢谢 + 老师 is thanks, not a name
            and _given_name(nxt, nxt_tag)
        ) or (_doubled_given_name(tags, i)):
            # A surname the dictionary knows, then a given name it did not: 笪 + 浩然,
            # 闻人 + 越, 宁静 + 怡; or one character heading a clause before a doubled
            # given name, whatever their tags: 钱 + 多多, 毛 + 豆豆.
            refs.append(PersonRef(base + start, base + pos + len(nxt), "name", 0.85))
        elif (
            tag in _NAME_TAGS
            and len(word) >= 2
            and not _time_tail(word)
            and word not in _DOUBLED_WORDS  # 宝宝, 娃娃: the weak references below
        ):
            # A dictionary name (鲁迅, 林黛玉) is a public figure or a character unless
            # the sentence places it in school life; private names are rarely entries.
            public = (
                rjieba.has_word(word)
                and not word.endswith(("老师", "同学"))
                and not _NICK_RE.fullmatch(word)  # 娜娜, 豆豆: a pet name, not a figure
            )
            if public and nxt_tag in _NAME_TAGS and len(nxt) == 1 and "\u4e00" <= nxt <= "\u9fff":
                # The dictionary name goes on with one more name character (欧阳明 + 轩):
                # the whole is no dictionary word, a private name.
                refs.append(PersonRef(base + start, base + pos + 1, "name", 0.85))
                continue
            if public and school_life is None:
                school_life = _SCHOOL_LIFE_RE.search(sentence) is not None
            weight = (0.6 if school_life else 0.45) if public else 0.9
            refs.append(PersonRef(base + start, base + pos, "name", weight))
        elif _split_diminutive(tags, i):
            # 小 or 阿 and a surname the segmenter cut apart (小 + 周 最近…): a pet name.
            refs.append(PersonRef(base + start, base + pos + 1, "nickname", 0.8))
        elif _split_pet_name(tags, i):
            # A doubled pet name the segmenter cut into its two characters (暖 + 暖).
            refs.append(PersonRef(base + start, base + pos + 1, "nickname", 0.8))
        elif _unknown_word_heading_a_clause(tags, i):
            # A word the segmenter built from characters its dictionary does not hold as a
            # word (its HMM): at the head of a clause, almost always a given name (梓涵,
            # 雅雯), whatever part of speech it guessed.
            refs.append(PersonRef(base + start, base + pos, "name", 0.75))
        elif (
            len(word) == 2
            and _NICK_RE.fullmatch(word)
            and word not in _NICK_STOP
            and word not in _DOUBLED_WORDS
            and (tag in _NICK_TAGS or _doubled_at_clause_start(tags, i))
        ):
            weak = word in _KINSHIP
            refs.append(
                PersonRef(
                    base + start, base + pos, "weak" if weak else "nickname", 0.55 if weak else 0.8
                )
            )
    return refs


# The segmenter tags many pet names as something else (安安 ns, 可可 v, 欣欣 a, 小北 ns);
# heading a clause, a word of that shape is a pet name unless it is a word of grammar
# (tags), a common word of the shape (_NICK_STOP) or one of the doubled words below.
_NOT_NICK_TAGS: Final = frozenset({"d", "y", "e", "o", "m", "q", "x"})
_DOUBLED_WORDS: Final = frozenset(
    words(
        "谢谢 哈哈 嘻嘻 呵呵 嘿嘿 天天 常常 刚刚 人人 个个 家家 往往 看看 试试 想想 说说 听听 写写"
        " 练练 走走 聊聊 问问 查查 找找 算算 读读 背背 改改 好好 慢慢 星星 宝宝 年年 步步 处处"
        " 画画 娃娃 猩猩 蛐蛐 蝈蝈 泡泡 球球 车车 饭饭 觉觉"
    )
)


def _doubled_at_clause_start(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    """A pet name (XX, 小X, 阿X) heading a clause, whatever the segmenter tagged it."""
    word, tag = tags[i]
    # (阿月, 小月 are tagged numerals for their second character)
    numeral_pet = tag == "m" and word[0] in "小阿" and not word[1].isdigit()
    if (tag in _NOT_NICK_TAGS and not numeral_pet) or word in _DOUBLED_WORDS:
        return False
    if i == 0:
        return True
    before, before_tag = tags[i - 1]
    return before_tag == "x" or before.endswith("家")


_UNKNOWN_TAGS: Final = frozenset({"n", "nz", "nr", "nrfg", "nrt", "ns", "c", "a", "i", "vn", "z"})
# Words before a clause's subject that are not part of it: 为什么梓涵…, 听说雅雯….
_SUBJECT_LEAD: Final = frozenset(
    words("为什么 为啥 听说 据说 原来 其实 后来 今天 昨天 最近 但是 可是")
)


def _unknown_word_heading_a_clause(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    word, tag = tags[i]
    if not 2 <= len(word) <= 3 or tag not in _UNKNOWN_TAGS or rjieba.has_word(word):
        return False
    if not all("\u4e00" <= ch <= "\u9fff" for ch in word) or word[0] in _NOT_NAME_FIRST:
        return False
    if i == 0:
        return True
    before, before_tag = tags[i - 1]
    return before_tag == "x" or before in _SUBJECT_LEAD or before.endswith("家")


def _split_pet_name(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    """Two equal single characters heading a clause, cut apart by the segmenter (暖 + 暖
    今天…): a doubled pet name, unless the doubled word is a word of grammar (谢谢)."""
    word, tag = tags[i]
    if len(word) != 1 or not "\u4e00" <= word <= "\u9fff" or tag in _FUNCTION_TAGS:
        return False
    if i + 1 >= len(tags) or tags[i + 1][0] != word or (i and tags[i - 1][1] != "x"):
        return False
    return word * 2 not in _DOUBLED_WORDS and word * 2 not in _NICK_STOP


def _split_diminutive(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    """小 or 阿 heading a clause before a single character tagged a surname, cut apart by
    the segmenter (小 + 周 最近查出…): the pet name 小周."""
    word, _tag = tags[i]
    if word not in ("小", "阿") or i + 1 >= len(tags) or (i and tags[i - 1][1] != "x"):
        return False
    nxt, nxt_tag = tags[i + 1]
    return (
        len(nxt) == 1
        and "\u4e00" <= nxt <= "\u9fff"
        and nxt_tag in _SURNAME_TAGS
        and word + nxt not in _NICK_STOP
    )


def _doubled_given_name(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    word, tag = tags[i]
    if len(word) != 1 or not "\u4e00" <= word <= "\u9fff" or tag in _FUNCTION_TAGS or tag == "d":
        return False
    if i + 1 >= len(tags) or (i and tags[i - 1][1] != "x"):
        return False
    given = tags[i + 1][0]
    return len(given) == 2 and given[0] == given[1] and given not in _DOUBLED_WORDS


def _time_tail(word: str) -> bool:
    """A token tagged a name whose tail is a time word (于 + 本周) is a preposition and a
    time, not a name."""
    tail = word[1:]
    return len(tail) >= 2 and word_tags(tail) == ((tail, "t"),)


def _given_name(word: str, tag: str) -> bool:
    """Whether a token can be the given name after a surname token."""
    # (the segmenter tags some given names it cannot place "x", as it does punctuation:
    # 司马 + 晓彤)
    return (
        1 <= len(word) <= 2
        and word.isalpha()
        and all("\u4e00" <= ch <= "\u9fff" for ch in word)
        and (tag not in _FUNCTION_TAGS or (tag == "x" and len(word) == 2))
        and tag not in ("t", "s", "eng")
    )


# Time and exam words that the segmenter glues to a following name (月考张三 → 月/考张/三):
# the rest of the clause is segmented again on its own.
_LEAD_RE: Final = fast_compile(
    r"(?:这次|上次|本次|这回|上回|这学期|上学期|本学期|今天|昨天|最近|期中|期末|月考|周测|周考|模拟考"
    r"|[一二三]模|考试|测验|听写|默写)+"
)


# What follows a clause's subject: a time word, a subject of school, an adverb, a verb of
# what happened (周一鸣这次…, 纪子昂上周…, 甘露露有…, 戚雨桐化学…).
_SUBJECT_NEXT_RE: Final = fast_compile(
    r"这次|这回|上次|本次|这学期|上学期|本学期|期中|期末|月考|周测|最近|昨天|昨晚|今天|前天|上周"
    r"|上个月|去年|从小|一直|又|也|还|总|老是|经常|的|有|对|在|被|因为|得了|考|拿|说|请|住院|发烧"
    r"|摔|做了|确诊|患|查出|语文|数学|英语|物理|化学|生物|历史|地理|政治|体育"
)
# Characters no given name holds in our texts: grammar, not names (马上就, 周一到, 白天在).
_NOT_IN_GIVEN: Final = frozenset(
    "的了是在有和与跟对给把被让向到从着过都也就还又再才要会能可去来上下里中这那"
)
# (not "ns": a place, 黄冈 + 密卷, heads a clause as often as a name does)
_COMPOUND_SURNAME_TAGS: Final = frozenset({"n", "nr", "nz"})
_ROLE_ENDINGS: Final = ("老师", "同学", "校长", "主任", "家长", "阿姨", "叔叔", "妈妈", "爸爸")


def _surname_start(chunk: str) -> int:
    """How many characters of ``chunk`` the segmenter's dictionary tags as a surname when
    they stand alone (周, 纪; a compound such as 司马, 诸葛), or 0."""
    pair = chunk[:2]
    if len(pair) == 2 and rjieba.has_word(pair) and word_tags(pair) == ((pair, "nr"),):
        return 2
    return 1 if word_tags(chunk[:1]) == ((chunk[:1], "nr"),) else 0


def _clause_initial_names(sentence: str, tags: tuple[tuple[str, str], ...]) -> list[PersonRef]:
    """A name the segmenter split into ordinary words (周一 + 鸣, 甘露 + 露, 纪子 + 昂): at
    the head of a clause, two to four characters that start with a surname (by the
    dictionary's tag of that character alone), form no dictionary word and are followed
    by what follows a subject (这次, 上周, 有, 数学 …), even when the segmenter glued the
    last character to it (鸣 + 有)."""
    offsets = list(accumulate((len(word) for word, _ in tags), initial=0))
    heads = [0] + [offsets[i + 1] for i, (_, tag) in enumerate(tags) if tag == "x"]
    refs: list[PersonRef] = []
    for head in heads:
        chunk = sentence[head : head + 4]
        if len(chunk) < 2 or not (
            "\u4e00" <= chunk[0] <= "\u9fff" and "\u4e00" <= chunk[1] <= "\u9fff"
        ):
            continue
        surname = _surname_start(chunk)
        lengths: tuple[int, ...] = (3, 2, 4)
        if not surname:
            # A compound surname the dictionary holds as some other noun (上官 n) before
            # a given name that is no dictionary word (雨辰, 婉清).
            pair = chunk[:2]
            if not (
                len(chunk) == 4
                and rjieba.has_word(pair)
                and word_tags(pair)[0][1] in _COMPOUND_SURNAME_TAGS
                and not rjieba.has_word(chunk[2:])
            ):
                continue
            surname, lengths = 2, (4,)
        for length in lengths:
            name = chunk[:length]
            end = head + length
            if (
                len(name) == length
                and length - surname in (1, 2)
                and all("\u4e00" <= ch <= "\u9fff" for ch in name)
                and not any(ch in _NOT_IN_GIVEN for ch in name[surname:])
                and not name.endswith(_ROLE_ENDINGS)
                and not rjieba.has_word(name)
                and _SUBJECT_NEXT_RE.match(sentence, end)
            ):
                refs.append(PersonRef(head, end, "name", 0.75))
                break
    return refs


# Characters that open many person names in the segmenter's dictionary (a statistic of
# its data, built by benchmarks/data/build_surname_chars.py, not a list grown by hand).
_SURNAME_CHARS: Final = frozenset(data_words("surname_chars.txt"))
# What the segmenter makes of a given name that is also a word (欣然 d, 浩然 a, 子轩 n).
_WORD_GIVEN_TAGS: Final = frozenset(
    {"a", "ad", "an", "ag", "d", "n", "ng", "nr", "nrfg", "nrt", "nz", "z", "i", "l"}
)
# The surname's own tag then: anything but grammar (谢 v, 张 q, 程 n; not 从 p, 和 c).
_SPLIT_SURNAME_BAR: Final = (_FUNCTION_TAGS - {"q"}) | {"d"}


def _split_surname_names(sentence: str, tags: tuple[tuple[str, str], ...]) -> list[PersonRef]:
    """A name the segmenter cut into a surname it read as an ordinary word and a given
    name that is a dictionary word (谢/v + 欣然/d, 程/n + 浩然/a): at the head of a
    clause, a one-character token that opens many names in the dictionary
    (:data:`_SURNAME_CHARS`), then a two-character word, the three forming no dictionary
    word, followed by what follows a subject (这次, 的, 数学 …)."""
    offsets = list(accumulate((len(word) for word, _ in tags), initial=0))
    heads = [0] + [i + 1 for i, (_, tag) in enumerate(tags) if tag == "x"]
    refs: list[PersonRef] = []
    for i in heads:
        if i + 1 >= len(tags):
            continue
        (surname, s_tag), (given, g_tag) = tags[i], tags[i + 1]
        name = surname + given
        if (
            surname in _SURNAME_CHARS
            and s_tag not in _SPLIT_SURNAME_BAR
            and len(given) == 2
            and g_tag in _WORD_GIVEN_TAGS
            and all("\u4e00" <= ch <= "\u9fff" for ch in given)
            and not any(ch in _NOT_IN_GIVEN for ch in given)
            and given not in _ROLE_ENDINGS
            and not rjieba.has_word(name)
            and _SUBJECT_NEXT_RE.match(sentence, offsets[i] + 3)
        ):
            refs.append(PersonRef(offsets[i], offsets[i] + 3, "name", 0.75))
    return refs


# Surnames put before a clause-initial word to ask the segmenter whether it is a given
# name: a probe of its name model, not a list of names (two, because a probe can join a
# given name's first character to itself: 王子 + 涵).
_PROBE_SURNAMES: Final = ("王", "李")


@lru_cache(maxsize=4096)
def _reads_as_given_name(chunk: str) -> bool:
    """The segmenter reads a surname followed by ``chunk`` as one person's name (王 + 可欣
    → 王可欣/nr), and ``chunk`` is no dictionary word (视力, 老师 are; 可欣, 佳怡 are not)."""
    if rjieba.has_word(chunk):
        return False
    for surname in _PROBE_SURNAMES:
        tags = word_tags(surname + chunk)
        # ("x": a word only the segmenter's HMM built, as it does for many full names)
        if len(tags) == 1 and (tags[0][1] in _NAME_TAGS or tags[0][1] == "x"):
            return True
        # The model reads the surname and the first character as the name and leaves the
        # second alone as a noun character (王雨 + 萱): a two-character given name it knows
        # only by halves.
        if (
            len(chunk) == 2
            and len(tags) == 2
            and tags[0] == (surname + chunk[0], tags[0][1])
            and tags[0][1] in _NAME_TAGS
            and tags[1][0] == chunk[1]
            and tags[1][1] in _HALF_NAME_TAGS
        ):
            return True
    return False


# The tags of a given name's second character the segmenter leaves on its own (萱 n).
_HALF_NAME_TAGS: Final = frozenset({"n", "ng", "nr", "nrfg", "nrt", "g"})


# What a clause-initial given name is followed by: what follows a subject, or its
# condition or a comparison (俊豪视力…, 梓萱离及格…, 佳怡没…).
_GIVEN_NEXT_RE: Final = fast_compile(
    _SUBJECT_NEXT_RE.pattern + r"|视力|身体|离|没|才|只|就|挂|差|踩|和|跟|这|上学期|下学期|半|成绩"
)
_NOT_GIVEN_TAGS: Final = frozenset(
    {"v", "vd", "vn", "m", "mq", "q", "d", "p", "c", "u", "ud", "uj", "ul", "f", "t", "s"}
)


# Where-words that can open a clause before its subject: 班上佳琪有…, 我们班子涵….
_PLACE_LEAD: Final = frozenset(words("班上 班里 我们班 咱班 咱们班 我班 组里 宿舍里"))


def _split_given_name(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    """A given name the segmenter cut into its two characters and tagged the first a name
    (梓/nrt + 萱/n)."""
    return (
        i + 1 < len(tags)
        and len(tags[i][0]) == 1
        and tags[i][1] in _NAME_TAGS
        and len(tags[i + 1][0]) == 1
        and tags[i + 1][1] not in _FUNCTION_TAGS
        and not rjieba.has_word(tags[i][0] + tags[i + 1][0])
    )


def _clause_initial_given_names(
    sentence: str, tags: tuple[tuple[str, str], ...]
) -> list[PersonRef]:
    """A given name heading a clause without its surname (可欣这次…, 佳怡这学期…, 梓 + 萱
    离…), whatever part of speech the segmenter guessed for it (vg, ag, n): two characters
    at a clause head that end on a token boundary and that the segmenter's name model reads
    as a given name after a surname (:func:`_reads_as_given_name`)."""
    offsets = list(accumulate((len(word) for word, _ in tags), initial=0))
    at_token = {offset: i for i, offset in enumerate(offsets)}
    heads = [0] + [
        offsets[i + 1] for i, (word, tag) in enumerate(tags) if tag == "x" or word in _PLACE_LEAD
    ]
    refs: list[PersonRef] = []
    for head in heads:
        chunk = sentence[head : head + 2]
        i = at_token.get(head)
        if (
            i is not None
            and i < len(tags)
            and head + 2 in at_token
            # (the model reads almost any unknown pair after a surname as a name; a verb,
            # a numeral or an exam word the segmenter made of the pair is none: 小测, 高二)
            and (len(tags[i][0]) != 2 or tags[i][1] not in _NOT_GIVEN_TAGS)
            and all("\u4e00" <= ch <= "\u9fff" for ch in chunk)
            and chunk[0] not in _NOT_NAME_FIRST
            and not _LEAD_RE.fullmatch(chunk)
            and _GIVEN_NEXT_RE.match(sentence, head + 2)
            and (_reads_as_given_name(chunk) or _split_given_name(tags, i))
        ):
            refs.append(PersonRef(head, head + 2, "name", 0.75))
    return refs


def _resegmented_names(sentence: str, base: int) -> list[PersonRef]:
    refs: list[PersonRef] = []
    for m in _LEAD_RE.finditer(sentence):
        if m.end() < len(sentence):
            rest = m.end()
            refs += [
                r for r in _segmenter_names(sentence[rest:], base + rest) if r.start == base + rest
            ]
    return refs


_RULE_REF_RES: Final = (
    _LATIN_NAME_RE,
    _BRACKET_RE,
    _SEAT_RE,
    _ROLE_RE,
    _PRONOUN_RE,
    _SELF_RE,
    _WEAK_RE,
    _X_DUI_RE,
    _TITLE_RE,
)
# Matches wherever one of the rule-based references could (each pattern keeps its flags).
_ANY_RULE_REF_RE: Final = fast_compile(
    "|".join(
        f"(?i:{p.pattern})" if p.flags & re.IGNORECASE else f"(?:{p.pattern})"
        for p in _RULE_REF_RES
    )
)


def forget_sentences() -> None:
    """Forget the segmentations and person references cached by sentence text (benchmarks
    measure text never seen before with it)."""
    segment.cache_clear()
    _sentence_persons.cache_clear()


def persons(doc: Doc, lo: int, hi: int) -> list[PersonRef]:
    """Every person reference of the sentence [lo, hi), sorted by start (cached per
    document, and per sentence text like the segmentation: summaries and facts are
    scanned again every time they are injected)."""
    key = (lo, hi)
    cached = doc._persons.get(key)
    if cached is not None:
        return cached
    refs = [
        PersonRef(lo + r.start, lo + r.end, r.kind, r.weight)
        for r in _sentence_persons(doc.text[lo:hi])
    ]
    doc._persons[key] = refs
    return refs


@lru_cache(maxsize=4096)
def _sentence_persons(sentence: str) -> tuple[PersonRef, ...]:
    """The person references of one sentence, offsets relative to it, sorted by start."""
    refs = _segmenter_names(sentence, 0)
    known = {(r.start, r.end) for r in refs}
    refs += [r for r in _resegmented_names(sentence, 0) if (r.start, r.end) not in known]
    covered = [(r.start, r.end) for r in refs]
    tags = segment(sentence)
    refs += [
        r
        for r in _clause_initial_names(sentence, tags)
        if not any(a < r.end and r.start < b for a, b in covered)
    ]
    covered = [(r.start, r.end) for r in refs]
    refs += [
        r
        for r in _clause_initial_given_names(sentence, tags)
        if not any(a < r.end and r.start < b for a, b in covered)
    ]
    covered = [(r.start, r.end) for r in refs]
    refs += [
        r
        for r in _split_surname_names(sentence, tags)
        if not any(a < r.end and r.start < b for a, b in covered)
    ]
    if _ANY_RULE_REF_RE.search(sentence) is None:
        # None of the rules below can match (most sentences): one scan instead of eight.
        return tuple(sorted(refs, key=lambda r: (r.start, -r.weight)))
    for m in _LATIN_NAME_RE.finditer(sentence):
        if m.group().lower() not in _EN_COMMON:
            refs.append(PersonRef(m.start(), m.end(), "latin", 0.85))
    for m in _BRACKET_RE.finditer(sentence):
        refs.append(PersonRef(m.start(1), m.end(1), "bracket", 0.9))
    for m in _SEAT_RE.finditer(sentence):
        refs.append(PersonRef(m.start(), m.end(), "seat", 0.85))
    for m in _ROLE_RE.finditer(sentence):
        refs.append(PersonRef(m.start(), m.end(), "role", 0.85))
    for m in _PRONOUN_RE.finditer(sentence):
        refs.append(PersonRef(m.start(), m.end(), "pronoun", 0.85))
    for m in _SELF_RE.finditer(sentence):
        refs.append(PersonRef(m.start(), m.end(), "self", 0.8))
    for m in _WEAK_RE.finditer(sentence):
        if sentence.startswith("们", m.end()) or _GOVERNED_RE.search(sentence, 0, m.start()):
            continue
        noun = m.group().lower()
        if noun in _CLASS_NOUNS and not _ONE_OF_RE.search(sentence, 0, m.start()):
            refs.append(PersonRef(m.start(), m.end(), "class", NOBODY))
            continue
        refs.append(PersonRef(m.start(), m.end(), "weak", 0.55))
    for m in _TITLE_RE.finditer(sentence):
        if m.group(1) not in _NOT_SURNAME:
            refs.append(PersonRef(m.start(), m.end(), "name", 0.85))
    for m in _X_DUI_RE.finditer(sentence):
        head = m.group(1)
        if (
            not rjieba.has_word(head)
            and not GROUP_RE.search(head)
            and head[0] not in "这那我你他她"
        ):
            refs.append(PersonRef(m.start(1), m.end(1), "x_dui", 0.8))
    return tuple(sorted(refs, key=lambda r: (r.start, -r.weight)))


# A weak reference that reports what is said (心理老师说…, 医生认为…) is its source, not
# its subject: an identifiable person before it is what the statement is about.
_REPORTER_RE: Final = fast_compile(r"(?:说|讲|认为|觉得|建议|表示|反映|诊断|判断)")
# A distributive word with a unit (各班, 每组, 各年级) is everyone of that kind, never a name.
_COLLECTIVE_RE: Final = fast_compile(r"[各每全](?:个|位)?(?:班|组|年级|科|校|位|人|队|家)")


def _person_adjacent(text: str, person: PersonRef, start: int) -> bool:
    """The person directly precedes the trigger (only a few characters between)."""
    return start - person.end <= 3 and not _NONHUMAN_RE.search(text, person.end, start)


def subject_of(doc: Doc, start: int, end: int, *, self_counts: bool) -> Subject:
    """Who the statement with its trigger at [start, end) is about."""
    text = doc.text
    lo, hi = doc.sentence(start)
    sentence_before = text[lo:start]
    if _FICTION_RE.search(text, lo, hi):
        return Subject(None, "fiction or a text under study")
    if _HYPOTHETICAL_RE.search(sentence_before):
        return Subject(None, "a hypothesis, a wish or a question")
    c_lo, c_hi = doc.clause(start)
    refs = [
        r
        for r in persons(doc, lo, hi)
        if (self_counts or r.kind != "self") and not (r.start < end and start < r.end)
    ]
    before = [r for r in refs if r.end <= start]
    after = [r for r in refs if r.start >= end and r.end <= c_hi]
    # The nearest reference before the trigger, preferring identifiable ones.
    person = None
    if before:
        strong = [r for r in before if r.weight > 0.6]
        person = (strong or before)[-1]
        last_end = max(r.end for r in before)
        nearest = max((r for r in before if r.end == last_end), key=lambda r: r.weight)
        reporter = _REPORTER_RE.match(text, nearest.end) is not None and nearest.weight <= 0.6
        if (
            nearest.start >= c_lo
            and _person_adjacent(text, nearest, start)
            and not (reporter and strong)
        ):
            # The reference right before the predicate in its clause is its subject, even
            # a weak one: <Lisa>: 为什么奶奶会生病 is about 奶奶.
            person = nearest
    elif after:
        # (after the trigger only an identifiable reference is its subject: a weak word
        # there is usually part of something else, 领取暖宝宝)
        strong_after = [r for r in after if r.weight > 0.6]
        person = strong_after[0] if strong_after else None
    # A relative clause to a group (有哮喘的同学请…, 患有哮喘、心脏病等的学生…: an
    # enumeration's 、 does not end the noun phrase) unless someone is pointed at in it.
    phrase_end = _PHRASE_END_RE.search(text, end, hi)
    rel = _RELATIVE_RE.search(text, end, phrase_end.start() if phrase_end else hi)
    pointed_at = person is not None and person.kind in ("role", "seat") and person.start >= c_lo
    if (
        rel
        and not pointed_at
        and (person is None or person.start < c_lo or person.start > rel.start())
    ):
        return Subject(None, "addressed to a group (…的同学)")
    if _NONHUMAN_RE.search(text, max(c_lo, start - 8), start) and (
        person is None or not _person_adjacent(text, person, start)
    ):
        return Subject(None, "an animal or a thing")
    if _STATISTIC_AFTER_RE.match(text, end):
        return Subject(None, "a class statistic")
    if _EXAM_ITEM_RE.search(text, lo, hi) and (person is None or person.weight < 0.9):
        return Subject(None, "an exam item's or a textbook's patient")
    if _AUTHORING_RE.search(text, lo, person.start if person is not None else start):
        # 出一道题：小明数学考了85分… — the people of an item being written are characters.
        return Subject(None, "the characters of an exam item being written")
    if person is None:
        return Subject(None, "no identifiable person")
    if _COLLECTIVE_RE.fullmatch(text, person.start, person.end):
        # (the segmenter's name model reads 各班, 每组 as a name: 各 and 每 look like surnames)
        return Subject(None, f"a group or class ({text[person.start : person.end]})")
    # A group between the person and the trigger is what the statement is about:
    # 他们班平均分…, 李华所在的接力队第二名.
    gap = (person.end, start) if person.end <= start else (end, person.start)
    group = next(
        (
            g
            for g in GROUP_RE.finditer(text, *gap)
            if not (_CLASS_SCOPE_RE.fullmatch(g.group()) and _RANKED_AFTER_RE.match(text, g.end()))
        ),
        None,
    )
    if group:
        return Subject(person, f"a group or class ({group.group()})")
    if person.kind == "weak" and (
        _HYPOTHETICAL_RE.search(text, start, c_hi) or _QUESTION_RE.search(text, lo, c_hi)
    ):
        # (only in the trigger's own clause: 孩子查出来有乙肝，不知道要不要告诉学校 states a fact)
        return Subject(person, "a general question")
    return Subject(person, "")
