"""The grade recogniser: a student's academic outcome, said of an identifiable person.

Outcomes are recognised in every form teachers and parents use, not only "subject +
number": scores and ranks (数学58分, 年级第35名, 112/150), pass and fail and their slang
(不及格, 挂了, 要补考, 考砸了, 红灯), qualitative results (优秀, 评了个良, 垫底, 吊车尾),
progress and decline (从七十多提高到九十, 名次往后退了不少), a bare number or an
approximate or Chinese numeral after an exam word (月考87, 九十出头, 三百名以后),
transcripts and report cards (成绩单, 素质报告册), and English mixed in (failed the
test, got a C, GPA). A trigger needs academic context in its sentence (a subject, an
exam word, 成绩, 分, 名次 …) unless it carries its own, and is blocked when
:func:`memory.redline.persons.subject_of` finds an identifiable person it is about.
Paper specifications (满分100分, 本题5分), rubrics, wishes, notices, class statistics
and team results pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from memory.redline.base import (
    CN_NUMERALS,
    DIGITS,
    THRESHOLD,
    VIEW_SPACES,
    Anchors,
    Candidate,
    Category,
    Doc,
    Finding,
    ahead,
    anchored_matches,
    back,
    en,
    fast_compile,
    followed_by,
    words,
)
from memory.redline.persons import GROUP_RE as _GROUP_RE
from memory.redline.persons import persons, subject_of

_CJK: Final = "\u4e00-\u9fff"
_SUBJECTS: Final = (
    "语文|数学|英语|物理|化学|生物|历史|地理|政治|道德与法治|道法|科学|信息技术|体育|音乐|美术"
)
_ACADEMIC_RE: Final = fast_compile(
    _SUBJECTS + r"|绩点|总分|期中|期末|月考|周考|周测|模拟考|[一二三]模|中考|高考|会考|学考|考试"
    r"|测验|测试|单元测|小测|随堂测|听写|默写|作文|成绩|分数|考核|竞赛|名次|排名|[0-9]分|考|卷"
    r"|[主副]科|[0-9一两三四五六七八九几][门科]|等级|等第|评定|报告|补考|挂科|及格|口语|实验"
    r"|排在|排到|掉到|名以后|名开外|名以内|名上下|班上|班里|在班|全班|年级里|[0-9一二三四五六七八九十百几]多?名(?![单字额著胜人义])"
    r"|"
    + en(
        *words(
            "math maths english physics chemistry biology history exam exams test reading"
            " writing listening speaking science geography essay"
            " tests quiz score scores grade grades gpa midterm final class"
        )
    )
)
_CN_NUM: Final = "[零一二三四五六七八九十百两〇]"
# What follows 分 when it is no score: 分钟, 分之, 分析, 分别, 分成 …
_NOT_SCORE_AFTER: Final = (
    "钟之析别成为组类配享布解子母段开期批层工散支针秒米贝饱熟制辨裂化流队校区院部店行担寸"
)
_NUM: Final = rf"(?:[0-9]++|{_CN_NUM}++)"
# What a rank or position number is not followed by when it counts something else.
_NOT_RANK_TAIL: Final = (
    r"(?!\s*(?:次|周|节|课|单元|章|题|学期|个|届|批|期|天|组|页|轮|场|阶段|部分|行|段|句|排|列"
    r"|小题|大题|道|年|月|日|晚|夜|星期|礼拜|会儿|阵|分钟|小时|秒|刻|代|辈|世纪))"
)

_TRANSCRIPT_RE: Final = fast_compile(
    r"成绩单|成绩表|成绩条|分数条|分数单|成绩册|成绩报告单?|素质报告[册单]|报告册|成绩记录"
    # (plural English ones are everyone's: report cards will be sent home)
    r"|各科成绩|考试成绩|综合素质评价|排名表|排名榜|report card(?!s)|transcript(?!s)"
)

# What stands before a letter grade: a verb or a noun of results, at most a few words, a
# connective (得了个B, 等级是A, got a C). No part but the two \s* runs is longer than 7.
_LETTER_LEAD: Final = (
    r"(?:等级|评级|等第|成绩|得了|拿了|考了|得到|评为|获评|获得|只有|只得|仅得|是|"
    + en("grade", "graded", "grades", "got", "get", "an", "a")
    + r")\s*个?[\u4e00-\u9fff]{0,3}?(?:是|为|:|of|is|was|an?)?\s*"
)
_LETTER_LEAD_END_RE: Final = fast_compile(f"(?:{_LETTER_LEAD})\\Z")
# A character of every word a lead starts with (等级, 评级, 等第, 成绩, 得了, 拿了, 考了,
# 得到, 评为, 获评, 获得, 只有, 只得, 仅得, 是; grade, got, get, an, a in any case):
# a window without one holds no lead.
_LETTER_LEAD_CHARS_RE: Final = re.compile("[级第绩得拿考评获只仅是gGaA]")

# (pattern, kind, needs academic context, a number a spec prefix such as 满分 disqualifies)
_Item = tuple[re.Pattern[str], str, bool, bool]
_ITEMS: Final[tuple[_Item, ...]] = (
    (
        fast_compile(
            rf"[0-9](?<![0-9.][0-9])[0-9]*(?:\.[0-9]+)?\s*多?\s*(?:分(?![{_NOT_SCORE_AFTER}])|"
            + en("point", "points", "pts", "marks")
            + ")"
        ),
        "score",
        True,
        True,
    ),
    (
        fast_compile(
            rf"(?:得分|分数|成绩|总分|绩点|{en('score', 'scored', 'scores', 'gpa')})"
            r"\s*(?:是|为|:|of|is|was|only|只有)?\s*"
            r"[0-9]+(?:\.[0-9]+)?(?![0-9.]|\s*(?:分|%|人|名|题|道|个|门|次|年|月|日|号|页|课|章|节"
            r"|届|级|班|天|周|小时))"
        ),
        "score_word",
        False,
        True,
    ),
    (
        fast_compile(
            r"(?:语文|数学|英语|物理|化学|生物|历史|地理|政治|道法|科学)\s*:?\s*[0-9]{1,3}"
            r"(?:\.[0-9])?(?![0-9.]|\s*(?:年|班|届|题|道|页|课|章|节|单元|册|版|分|个|次|人|%|级"
            r"|小时|天|周|号|期|讲|套|张|份|遍|篇|本|上|下))"
        ),
        "score_subject",
        False,
        True,
    ),
    (
        # A roster of people and their scores: 苗苗 612，鹏鹏 587; 韩梅梅 95、李雷 88.
        fast_compile(
            rf"(?:[{_CJK}]{{2,4}}|[A-Z][a-z]{{1,12}})\s*:?\s*[0-9]{{2,3}}(?:\.5)?\s*[、,;]\s*"
            rf"(?:[{_CJK}]{{2,4}}|[A-Z][a-z]{{1,12}})\s*:?\s*[0-9]{{2,3}}(?:\.5)?"
            r"(?![0-9%.]|\s*(?:岁|个|人|元|块|次|分钟|页|号|米|斤|公斤|cm|kg|年|月|日|天))"
        ),
        "roster",
        False,
        False,
    ),
    (
        fast_compile(r"[0-9](?<![0-9./][0-9])[0-9]{0,2}(?:\.[0-9]+)?\s*/\s*[0-9]{2,3}(?![0-9/])"),
        "fraction",
        True,
        True,
    ),
    (
        fast_compile(_LETTER_LEAD + r"[A-F][+-]?(?![A-Za-z0-9])"),
        "letter",
        True,
        False,
    ),
    (
        # A bare number or numeral right after an exam word: 月考87, 期中112, 测验七十三.
        fast_compile(
            r"(?:月考|期中|期末|测验|小测|(?<![上下本这每])周测|周考|模拟考|[一二三]模|单元测试?|考试|卷子|听写"
            r"|默写|quiz"
            r"|test|midterm|final)(?:总分|成绩|数学|语文|英语|物理|化学|[^0-9,:;。!?]{0,4}?)"
            r"(?:考了个?|得了|只有|才|是|为|拿了)?\s*"
            rf"(?:[0-9]{{2,3}}(?:\.[0-9])?|{_CN_NUM}{{2,5}})"
            r"(?![0-9.%]|\s*(?:分钟|道|题|个|人|页|名|%|年|月|日|号|次|天|周|小时|秒|分之|套|张|份|篇"
            r"|课|章|节|单元|米|千米|公里|秒|克|千克|斤|元|块|岁|度|cm|km|kg|m\b))"
        ),
        "bare_number",
        False,
        True,
    ),
    (
        # Approximate numerals by their tail: 九十出头, 八十来分, 三百名以后, 二十名上下.
        fast_compile(
            rf"(?:{_CN_NUM}|[0-9])+\s*(?:出头|来分|多分|几分|分左右|多名|几名|名|多|几)?\s*"
            r"(?:出头|来分|分左右|左右|上下|开外|名以后|名开外|名以内|名上下|以内|以后|名开外)"
        ),
        "approx_tail",
        True,
        True,
    ),
    (
        # Other approximate and Chinese numerals: 刚过一百, 将近满分, 前五十, 才考了六十多,
        # 总分一百二十多. Every branch starts with one of its anchors, so it is matched at
        # the anchors only (_MATCH_AT_ANCHOR).
        fast_compile(
            # (刚过 closing a clause after a result: 四级成绩出来了，四百二，刚过)
            rf"刚过\s*(?:{_CN_NUM}+|[0-9]+)|刚过(?=\s*(?:$|[,.;!?。、]))|(?:将近|接近|差点)满分"
            r"|(?:考了?|拿了?|得了?|测|考试|测验|听写|默写|[拿考得]不到|没[拿考得]到)个?\s*满分(?![作卷答范标试题0-9])"
            # A subject or a paper with 满分 and no number after it: 语文作文满分.
            r"|(?:语文|数学|英语|物理|化学|生物|历史|地理|政治|作文|听写|默写|口语|实验|小测|测验)满分"
            r"(?!\s*(?:[0-9一二三四五六七八九十百]|[作卷答范标试题是为:]))"
            rf"|(?:年级|班级|班里|全班)前\s*(?:{_CN_NUM}+|[0-9]+)\s*名?(?![0-9]){_NOT_RANK_TAIL}"
            rf"|前\s*(?:{_CN_NUM}+|[0-9]+)\s*名?(?![0-9]){_NOT_RANK_TAIL}"
            rf"|(?:考了|只考了?|才考了?|考到|只有|才|得了|才得了?|拿了)\s*(?:{_CN_NUM}{{1,5}}|[0-9]{{1,3}})多?"
            r"(?![0-9分辈下次遍回趟天年个门])"
            rf"|(?:总分|分数|成绩|数学|语文|英语|物理|化学|生物|历史|地理)\s*{_CN_NUM}{{2,6}}多?"
            # One numeral and 分 after a result verb (十分 alone is "very"): 只得了八分.
            r"|(?:得了|拿了|考了|只有)\s*[零一二三四五六七八九两]多?\s*分(?![钟之])"
            # Below a score: 八十都没到, 没上六十.
            rf"|(?:{_CN_NUM}{{2,5}}|[0-9]{{2,3}})\s*分?\s*(?:都|也)?(?:没到|不到|没上)"
            rf"|(?:没上|没到|不到)\s*(?:{_CN_NUM}{{2,5}}|[0-9]{{2,3}})\s*分?(?![0-9])"
            # Short of a mark by a few points: 差3分满分, 还差两分, 差十几分.
            rf"|差\s*(?:{_CN_NUM}{{1,5}}|[0-9]{{1,3}})\s*(?:多|几)?\s*分(?![钟之析别成为组类配])"
        ),
        "approx",
        True,
        True,
    ),
    (
        fast_compile(rf"{_CN_NUM}{{2,5}}多?\s*分(?![钟之])"),
        "approx_score",
        True,
        True,
    ),
    (
        fast_compile(
            rf"(?:排名|名次)\s*(?:是|为|:)?\s*(?:倒数)?\s*(?:第\s*)?{_NUM}(?:\s*名)?{_NOT_RANK_TAIL}"
            + rf"|{en('rank', 'ranked')}\s*(?:#|[Nn]o\.?\s*)?[0-9]+"
        ),
        "rank_word",
        False,
        False,
    ),
    (
        fast_compile(
            r"(?:年级|班级|班上|班里|全班|全校|全年级|级部|全区|全市|全县|全省)\s*(?:排名|排)?\s*"
            rf"(?:倒数)?\s*第\s*{_NUM}(?:\s*名)?{_NOT_RANK_TAIL}"
        ),
        "rank_scope",
        False,
        False,
    ),
    (
        fast_compile(
            rf"倒数\s*第\s*{_NUM}(?:\s*名|{_NOT_RANK_TAIL})|第\s*{_NUM}\s*名|倒数几名|名次|排名"
        ),
        "rank_plain",
        True,
        False,
    ),
    (
        # Pass and fail, slang included; strong words carry their own context.
        fast_compile(
            r"挂[了掉]?(?:[一两三四五六七八九几0-9]|十几)(?:门|科)"
            r"|不及格|没及格|没有及格|刚及格|刚刚及格|勉强及格|(?:踩线|压线|擦线|擦边)及格|及格边缘|挂科|挂了|挂掉"
            r"|(?:总算|终于|才|也|都|算是|考)及格了?|(?:拿了?|得了?|考了?)个及格|(?<![不没])及格了|及格线(?:上下|附近|边缘|徘徊)"
            r"|(?:考|吃|拿)了?个?(?:大)?鸭蛋|零蛋|交了?白卷|全军覆没|惨不忍睹"
            # A score at the line (分数刚好压线, 压线进了重点高中; not handwriting on the line).
            r"|(?:分数|成绩|总分|分)[^,。!?;]{0,4}?(?:压线|踩线)|(?:压线|踩线)(?:进|上|过|考上|被录取)"
            r"|补考|重修|红灯|不合格|没过关|没过|没通过|没达标|不达标|考砸|考崩|考糊|考炸|考得?稀烂"
            r"|一塌糊涂|考得?[^,。!?;]{0,3}?(?:很差|太差|真差|差劲|差多了|不理想|很好|不错|挺好|很棒|糟糕)"
            r"|考(?:得|的)?(?:很|太|真|特别|非常|挺)?(?:差|好|烂)"
            # Homophone typos of 及格 (不几格, 没极格) and the English verb in Chinese (fail了).
            r"|(?:不|没有?)(?:几|极|即|急)格"
            r"|(?<![A-Za-z])(?:failed|fails|fail|flunked|barely passed|passed)(?![A-Za-z])"
            r"|(?<![A-Za-z])(?:below|above) average(?![A-Za-z])"
            r"|(?<![A-Za-z])ranked (?:last|first|top|bottom)(?![A-Za-z])"
        ),
        "pass_fail",
        True,
        False,
    ),
    (
        # Qualitative results and standing.
        fast_compile(
            r"拖后腿|偏科|全优|全A|优秀|良好|(?:有)?待(?:提高|改进|加强)|(?:得了|拿了|考了|评了|评为|被评为|是|都是|等级是|等级为|等第是)个?[优良中差]"
            r"(?![秀好等点势质美异])(?=$|[,.;!?:。、\s)\"”]|了|的|啊|呢|吧|哦|等|级|档)|合格|中下游|中上游|下游|吊车尾|垫底|数一数二|学霸|学渣|最差|倒数"
            r"|(?:全班|全年级|年级|班里|班上)?最(?:低|差)分?|最高分"
            r"|(?:成绩|基础|底子|功底)(?:很|太|特别|非常|挺|比较|一直|还|都|也|向来|始终){0,2}"
            r"(?:差|好|一般|不好|不错|优异|拔尖|平平|薄弱|扎实|垫底)"
            r"|(?:学|考)得一般"
            r"|(?<![A-Za-z])(?:top|bottom) of (?:the|his|her|my|our) (?:class|grade|year)"
            r"(?![A-Za-z])"
            r"|(?<![A-Za-z])came (?:first|last|top|bottom|[0-9]{1,3}(?:st|nd|rd|th))(?![A-Za-z])"
        ),
        "qualitative",
        True,
        False,
    ),
    (
        # Progress and decline over time.
        fast_compile(
            r"进步|退步|提高了|提高到|提到|下滑|下降|往后退|往前挪|往前|往后|往下掉|掉到|掉了|升到|滑到"
            r"|比上次[^,。!?;]{0,6}?(?:少|多|高|低|差|好)|少了[^,。!?;]{0,4}分|多了[^,。!?;]{0,4}分"
            r"|(?<![A-Za-z])(?:improved|dropped|declined)(?![A-Za-z])"
            # went from 62 to 85, jumped from a C to an A
            r"|(?<![A-Za-z])(?:went|gone|jumped|rose|fell|climbed|slipped|moved) from"
            r"\s+(?:an?\s+)?(?:[A-F][+-]?|[0-9]{1,3}%?)\s+to\s+(?:an?\s+)?(?:[A-F][+-]?|[0-9]{1,3})"
            r"(?![A-Za-z0-9])"
            rf"|(?:前进|后退|进|退|上升|下降|掉)了?(?:{_CN_NUM}+|[0-9]+)多?个?名"
            # Points taken off: 作文又被扣了不少分, 扣了十几分.
            rf"|扣了(?:不少|很多|好多|一些|几|十几|{_CN_NUM}+|[0-9]+)多?\s*分(?![钟之析])"
        ),
        "progress",
        True,
        False,
    ),
    (
        # An English result with a bare number: got 72 on the test, scored 45% in the exam.
        fast_compile(
            r"(?<![A-Za-z])(?:got|gets|get|scored|scores|received|earned)(?![A-Za-z])"
            r"\s*(?:a|an|only|just)?\s*[0-9]++(?:\.[0-9]++)?\s*(?:%|/\s*[0-9]{2,3}|points|marks)?"
            r"(?!\s*(?:apples|minutes|hours|days|years|people|students|kids|times))"
        ),
        "score_en",
        True,
        False,
    ),
    (
        # How many items were right or wrong: 只对了三道大题, 错了十几个.
        fast_compile(
            rf"(?:只|才|就|全|都)?(?:做)?(?:对|错)了(?:{_CN_NUM}+|[0-9]+)(?:多|几)?(?:道|个|处|题|空)"
            r"|(?<![完安])全对|全错|(?:错|对)了一大半|(?:错|对)了一半"
        ),
        "items",
        True,
        False,
    ),
    (
        _TRANSCRIPT_RE,
        "transcript",
        False,
        False,
    ),
)

_SUBJECT_WORDS: Final = tuple(_SUBJECTS.split("|"))
_NUMBER_START: Final = DIGITS + CN_NUMERALS + VIEW_SPACES
_RANK_SCOPES: Final = words("年级 班级 班上 班里 全班 全校 全年级 级部 全区 全市 全县 全省")
# Literals every match of a kind contains (a test checks it on generated matches of every
# pattern): the sentences holding none are never scanned (see SentenceGate). Latin
# literals match in any case. ``letter`` (A-F after a verb as short as 是 or "a") has no
# useful literal and scans the whole text.
GATE_LITERALS: Final[dict[str, tuple[str, ...]]] = {
    "score": (
        *followed_by(tuple(DIGITS), "分多" + VIEW_SPACES),
        *("point", "pts", "marks"),
    ),
    "score_word": ("得分", "分数", "成绩", "总分", "绩点", "score", "gpa"),
    "score_subject": followed_by(
        ("语文", "数学", "英语", "物理", "化学", "生物", "历史", "地理", "政治", "道法", "科学"),
        DIGITS + ":" + VIEW_SPACES,
    ),
    "fraction": followed_by(tuple(DIGITS), "/" + VIEW_SPACES),
    "roster": followed_by(tuple(DIGITS), "、,;" + VIEW_SPACES),
    "bare_number": (
        *("月考", "期中", "期末", "测验", "小测", "周测", "周考", "模拟考", "一模", "二模"),
        *("三模", "单元测", "考试", "卷子", "听写", "默写", "quiz", "test", "midterm", "final"),
    ),
    # (the tail right after a numeral, a space or the end of a middle part: 九十出头,
    # 80 分左右, 三百名以后; not 40分钟左右)
    "approx_tail": followed_by(
        tuple(_NUMBER_START + "头分右多几名"),
        words("出头 来分 分左右 左右 上下 开外 名以后 名开外 名以内 名上下 以内 以后"),
    ),
    "approx": (
        "刚过",
        "满分",
        *followed_by(
            tuple(DIGITS + CN_NUMERALS + "分都也" + VIEW_SPACES), ("没到", "不到", "没上")
        ),
        *followed_by(("没到", "不到", "没上", "差"), _NUMBER_START),
        *followed_by(("前",), _NUMBER_START),
        *followed_by(
            ("考了", "只考", "才考", "考到", "只有", "才", "得了", "才得", "拿了"), _NUMBER_START
        ),
        *followed_by(
            ("总分", "分数", "成绩", "数学", "语文", "英语", "物理", "化学", "生物", "历史"),
            CN_NUMERALS + VIEW_SPACES,
        ),
        *followed_by(("地理",), CN_NUMERALS + VIEW_SPACES),
    ),
    "approx_score": followed_by(
        tuple(a + b for a in CN_NUMERALS for b in CN_NUMERALS), "分多" + VIEW_SPACES
    ),
    "rank_word": ("排名", "名次", "rank"),
    "rank_scope": followed_by(_RANK_SCOPES, "第排倒" + VIEW_SPACES),
    "rank_plain": (*followed_by(tuple(_NUMBER_START), "名"), "倒数", "名次", "排名"),
    "pass_fail": (
        *("及格", "挂科", "挂了", "挂掉", *followed_by(("挂",), "一两三四五六七八九几十" + DIGITS)),
        *("补考", "重修", "红灯", "合格", "没过", "没通过", "达标", "考砸", "考崩", "考糊"),
        *("压线", "踩线"),
        *("考炸", "稀烂", "糊涂", "很差", "太差", "真差", "差劲", "差多了", "不理想", "很好"),
        *("不错", "挺好", "很棒", "糟糕", "鸭蛋", "零蛋", "白卷", "全军覆没", "惨不忍睹"),
        *followed_by(("考",), "差好烂得的很太真特非挺"),
        *("几格", "极格", "即格", "急格"),
        *("fail", "flunked", "passed", "average", "ranked"),
    ),
    "qualitative": (
        *("top of", "bottom of", "came"),
        *(
            "全优",
            "全a",
            "优秀",
            "良好",
            "合格",
            "下游",
            "中上游",
            "吊车尾",
            "垫底",
            "数一数二",
            "学霸",
        ),
        *("学渣", "最差", "倒数", "成绩", "得一般", "最低", "最高分"),
        # (基础 is everywhere, 基础题; 基础很差 and 基础薄弱 are not)
        *followed_by(("基础", "底子", "功底"), "很太特非挺比一还都也向始差好不优拔平薄扎垫"),
        *("拖后腿", "偏科", "待提高", "待改进", "待加强"),
        *followed_by(("了", "为", "是"), "优良中差个"),
    ),
    "progress": (
        *followed_by(("进", "退", "掉", "升", "降"), DIGITS + CN_NUMERALS + "了"),
        *("进步", "退步", "提高了", "提高到", "提到", "下滑", "下降", "往后", "往前", "往下"),
        *("掉到", "掉了"),
        *("升到", "滑到", "比上次", "少了", "多了", "improved", "dropped", "declined"),
        "扣了",
        *("went from", "gone from", "jumped from", "rose from", "fell from", "climbed from"),
        *("slipped from", "moved from"),
    ),
    "score_en": ("got", "gets", "get", "scored", "scores", "received", "earned"),
    "items": ("对了", "错了", "全对", "全错"),
    "transcript": ("成绩", "分数", "报告", "综合素质", "排名", "report card", "transcript"),
}
_ANCHORS: Final = Anchors(GATE_LITERALS)

# --------------------------------------------------------------------------------------
# Confirming a loose anchor where the trigger pass finds it
# --------------------------------------------------------------------------------------

# Some anchors are everywhere in teacher text (10分钟, 满分100分, 期末复习, 考试时间): the
# trigger pass (memory.redline.engine) asks these checks before it marks a sentence.
# Each is a necessary condition for a match of its kind that holds the anchor at
# [start, end) and that the spec prefix does not veto (a test checks it on matches
# generated from the patterns): False means no such match can hold this occurrence.
_SCORE_TAIL_RE: Final = re.compile(rf"\s*多?\s*(?:分(?![{_NOT_SCORE_AFTER}])|(?i:point|pts|marks))")
_CN_SCORE_TAIL_RE: Final = re.compile(r"多?\s*分(?![钟之])")
_FRACTION_TAIL_RE: Final = re.compile(r"\s*/")
_ROSTER_TAIL_RE: Final = re.compile(r"\s*[、,;]")
_BARE_TAIL_RE: Final = re.compile(
    r"试?(?:总分|成绩|数学|语文|英语|物理|化学|[^0-9,:;。!?]{0,4}?)"
    rf"(?:考了个?|得了|只有|才|是|为|拿了)?\s*(?:[0-9]|{_CN_NUM})"
)
_SCORE_WORD_TAIL_RE: Final = re.compile(
    r"[ds]?\s*(?:是|为|:|of|is|was|only|只有)?\s*[0-9]", re.IGNORECASE
)
_STANDING_TAIL_RE: Final = re.compile(
    r"(?:很|太|特别|非常|挺|比较|一直|还|都|也|向来|始终){0,2}"
    r"(?:差|好|一般|不好|不错|优异|拔尖|平平|薄弱|扎实|垫底)"
)
# The last character of what may stand before 满分 in the ``approx`` pattern.
_FULL_MARKS_BEFORE: Final = frozenset("考了拿得测试验写个近点文学语理史治物到")
_DELIM_RE: Final = re.compile(r"[。!?;\n\r.]")


def _scale_after_result(text: str, lo: int, start: int, end: int, hi: int) -> bool:
    """满分 after a result gives the result's scale, not a paper's: 作文只得了十一分（满分
    二十五）, 考了72分，满分120. Any other spec word in the sentence still vetoes."""
    if _SPEC_CONTEXT_RE.search(text, lo, start):
        return False
    after = [m.group() for m in _SPEC_CONTEXT_RE.finditer(text, end, hi)]
    return all(word == "满分" for word in after) and (
        _RESULT_RE.search(text, max(lo, start - 4), end) is not None
    )


def _spec_before(text: str, number_start: int) -> bool:
    """The spec prefix vetoes a number starting here (满分100分), decided without the
    sentence's bounds: only when no delimiter lies in the window the veto reads."""
    lo = max(0, number_start - 8)
    return _DELIM_RE.search(text, lo, number_start) is None and (
        _SPEC_PREFIX_RE.search(text, lo, number_start) is not None
    )


_NUMBER_CHARS: Final = DIGITS + "." + CN_NUMERALS


def _number_start(text: str, end: int, chars: str) -> int:
    while end and text[end - 1] in chars:
        end -= 1
    return end


def _confirm_score(text: str, start: int, end: int) -> bool:
    if not "0" <= text[start] <= "9":
        return True  # point, pts, marks
    return _SCORE_TAIL_RE.match(text, start + 1) is not None and not _spec_before(
        text, _number_start(text, start + 1, DIGITS + ".")
    )


def _confirm_cn_score(text: str, start: int, end: int) -> bool:
    return _CN_SCORE_TAIL_RE.match(text, start + 2) is not None and not _spec_before(
        text, _number_start(text, start + 2, CN_NUMERALS)
    )


def _confirm_full_marks(text: str, start: int, end: int) -> bool:
    if text[start:end] != "满分":
        return True
    at = start
    while at and text[at - 1] in VIEW_SPACES:
        at -= 1
    return at > 0 and text[at - 1] in _FULL_MARKS_BEFORE


def _confirm_transcript(text: str, start: int, end: int) -> bool:
    return _TRANSCRIPT_RE.search(text, max(0, start - 4), min(len(text), end + 4)) is not None


def _confirm_standing(text: str, start: int, end: int) -> bool:
    if text[start:end] != "成绩":
        return True
    return _STANDING_TAIL_RE.match(text, end) is not None


def _tail(pattern: re.Pattern[str], *, at_end: bool = True) -> Callable[[str, int, int], bool]:
    """A check that ``pattern`` matches right after the anchor (or after its first
    character, the digit of "5 ")."""

    def confirm(text: str, start: int, end: int) -> bool:
        return pattern.match(text, end if at_end else start + 1) is not None

    return confirm


def _confirm_letter(text: str, start: int, end: int) -> bool:
    """A capital A-F standing alone is a letter grade only after its lead (Part A, ATP's
    A, option C are not). The lead's parts after its first word hold at most 7
    characters besides two runs of spaces, and its first word at most 6: the window
    reaches back over the spaces before the capital, 7 characters, any run of spaces
    there, and 6 more."""
    at = start
    while at and text[at - 1].isspace():
        at -= 1
    lo = max(0, at - 7)
    while lo and text[lo - 1].isspace():
        lo -= 1
    # (most capitals of a teacher's text, options and parts, have no lead word near them:
    # one scan for its characters before the lead's pattern is tried at every position)
    if _LETTER_LEAD_CHARS_RE.search(text, max(0, lo - 6), start) is None:
        return False
    return _LETTER_LEAD_END_RE.search(text, max(0, lo - 6), start) is not None


CONFIRMS: Final[dict[str, Callable[[str, int, int], bool]]] = {
    "score": _confirm_score,
    "approx_score": _confirm_cn_score,
    "fraction": _tail(_FRACTION_TAIL_RE, at_end=False),
    "roster": _tail(_ROSTER_TAIL_RE, at_end=False),
    "bare_number": _tail(_BARE_TAIL_RE),
    "score_word": _tail(_SCORE_WORD_TAIL_RE),
    "approx": _confirm_full_marks,
    "transcript": _confirm_transcript,
    "qualitative": _confirm_standing,
    "letter": _confirm_letter,
}
LETTER_GATE_RE: Final = re.compile(r"[A-F](?![A-Za-z0-9])")


# A score right after these describes the paper, not a result: 满分100分, 每小题3分, 占10分
# (but 考了满分100分 is a result).
_SPEC_PREFIX_RE: Final = fast_compile(
    r"(?:(?<!考了)(?<!得了)(?<!拿了)(?<!考到)(?<![考得拿])满分|总分值|分值|优秀线|及格线|分数线"
    r"|每(?:个?小题|小问|道题?|题|空|问|个|项|处|格|一题|一问|部分|篇|步)"
    r"|本题|该题|此题|这题|本大题|本小题|这道题|小题|大题|压轴题"
    r"|共|占|计|合计|总计|一共|及格|录取线|试卷|卷面|全卷|本卷|卷子|整卷|题目|时间|时长|限时"
    r"|定为|定在|设为|改成|改为|从)"
    r"(?:的)?(?:总分|满分)?\s*(?:为|是|:|有|了|约|达)?\s*$"
)
# The trigger describes the paper, a rubric or a plan, not a result.
_SPEC_CONTEXT_RE: Final = fast_compile(
    r"评分|标准|细则|分为|分成|分档|档次|等级评价|满分|每题|每小题|每空|分值|出一份|出一套|出题|试卷[^,。]{0,6}"
    r"(?:分|题)|设计|模板|评价量表|及格线|优秀线|定为|公布|查卷|签字|名单|通知|统计|分布|人数"
)
# A score followed by these is the edge of a band: 90分以上, 60分及以下, 80分至89分.
_BAND_AFTER_RE: Final = fast_compile(r"\s*(?:及以上|及以下|或以上|或以下|以上|以下|至|到|~|-)")
_RESULT_RE: Final = fast_compile(
    r"考了|考到|考得|考出|得了|得到|拿了|拿到|获得|得分|分数是|分数为|成绩是|成绩为|成绩:|只有"
    r"|排名|排在|名列|位列|只考|才考|仅考|" + en("scored", "got", "received", "earned", "ranked")
)
_TEMPLATE_AFTER_RE: Final = fast_compile(
    r"^.{0,4}?(?:模板|模版|格式|样式|样板|表头|设计|制作|怎么)"
)
# A rank in a competition or a sports event is not an academic result (unless an exam or
# a subject is named too): 绘画比赛第一名, 一百米第三名.
_COMPETITION_RE: Final = fast_compile(
    r"比赛|大赛|运动会|体育节|艺术节|演讲|朗诵|歌唱|歌咏|合唱|绘画|书法|舞蹈|[0-9一二三四五六七八九十百千]+米"
    r"|跳远|跳高|长跑|短跑|游泳|球赛|象棋|围棋|" + en("race", "match", "tournament", "contest")
)
_EXAM_RE: Final = fast_compile(
    r"语文|数学|英语|物理|化学|生物|历史|地理|政治|道法|科学"
    + r"|期中|期末|月考|周测|考试|测验|模拟考|[一二三]模|中考|高考|成绩|分数|"
    + en("exam", "test", "quiz", "midterm", "final", "math", "maths", "english", "physics")
)
_COMPETITION_KINDS: Final = frozenset(
    {
        *("rank_word", "rank_scope", "rank_plain", "approx", "approx_tail", "qualitative"),
        *("pass_fail", "progress", "items", "score_en"),
    }
)
# Kinds whose words often describe a rubric or a plan; the spec context vetoes them.
_SPEC_VETOED: Final = frozenset(
    {
        "pass_fail",
        "qualitative",
        "letter",
        "approx",
        "approx_tail",
        "approx_score",
        "transcript",
        "progress",
        "items",
    }
)


class GradeRecogniser:
    category = Category.GRADE

    def find(self, doc: Doc) -> list[Candidate]:
        text = doc.text
        out: list[Candidate] = []
        anchored = _ANCHORS.positions(text) if doc.anchors is None else doc.anchors
        for pattern, kind, _, spec_sensitive in _ITEMS:
            if anchored is not None and kind in GATE_LITERALS:
                positions = anchored.get(kind)
                if not positions:
                    continue  # (most kinds have no anchor in a sentence)
                matches = anchored_matches(doc, pattern, positions)
            elif kind == "letter" and LETTER_GATE_RE.search(text) is None:
                continue  # every letter grade ends in a capital A-F standing alone
            else:
                matches = list(pattern.finditer(text))
            for m in matches:
                start = m.start()
                # The cheapest veto, before any object is made: the number describes the
                # paper (满分100分, 每题3分). Most numbers of an exam request end here.
                # It reads before the whole number, as the trigger pass's checks do: a
                # match may start inside a longer run of numerals (每题十二百多分).
                if spec_sensitive:
                    lo = doc.sentence(start)[0]
                    at = max(lo, _number_start(text, start, _NUMBER_CHARS))
                    if _SPEC_PREFIX_RE.search(text, max(lo, at - 8), at):
                        continue
                out.append(Candidate(start, m.end(), kind))
        return out

    def validate(self, doc: Doc, candidate: Candidate) -> bool:
        value = doc.text[candidate.start : candidate.end]
        if candidate.kind == "fraction":
            got, _, full = value.partition("/")
            return float(got) <= float(full)  # 58/100 is a score; 9/3 or 150/120 is not
        return True

    def score(self, doc: Doc, candidate: Candidate) -> Finding:
        text = doc.text
        start, end, kind = candidate.start, candidate.end, candidate.kind
        trigger = text[start:end]

        def finding(score: float, *reasons: str) -> Finding:
            # A blocked trigger takes its clause with it; a rejected one keeps its own span
            # (working out clauses for every rejected number would cost most of the scan).
            lo, hi = doc.clause_span(start, end) if score >= THRESHOLD else (start, end)
            return Finding(Category.GRADE, lo, hi, score, reasons, trigger)

        needs_context, _ = _FLAGS[kind]
        lo, hi = doc.sentence(start)
        if (
            kind == "score"
            and (band := _BAND_AFTER_RE.match(text, end))
            and (
                not _RESULT_RE.search(text, max(lo, start - 6), start)
                or text.startswith(("的", "者"), band.end())  # 得分在40分以上的 (those who)
            )
        ):
            return finding(0.1, "a band of a rubric (90分以上), not a result")
        if kind == "roster":
            if _ROSTER_COUNTS_RE.search(text, lo, hi):
                return finding(0.1, "a list of counts (人数, 名额 …), not of scores")
            named = [
                r
                for r in persons(doc, lo, hi)
                if start <= r.start
                and r.end <= end
                and r.kind in _ROSTER_KINDS
                and not text[r.start : r.end].endswith(("老师", "校长", "主任"))
            ]
            if not named:
                return finding(0.1, "a list of numbers with nobody named in it")
            who = text[named[0].start : named[0].end]
            return finding(named[0].weight, f"roster ({trigger})", f"names {who} ({named[0].kind})")
        if needs_context and not _ACADEMIC_RE.search(
            text, back(text, start, lo, 16), ahead(text, end, hi, 16)
        ):
            return finding(0.0, "no academic context near it")
        if (
            kind in _SPEC_VETOED
            and (_SPEC_CONTEXT_RE.search(text, lo, start) or _SPEC_CONTEXT_RE.search(text, end, hi))
            and not (kind == "transcript" and _possessed(doc, lo, start))
            # (points short of full marks or a pass are a result: 差一分满分)
            and not (trigger.startswith("差") and _SHORT_OF_RE.match(text, end))
            and not _scale_after_result(text, lo, start, end, hi)
        ):
            return finding(0.1, "a rubric, a paper or a notice, not a result")
        if (
            kind in _COMPETITION_KINDS
            and _COMPETITION_RE.search(text, lo, hi)
            and not _EXAM_RE.search(text, lo, hi)
        ):
            return finding(0.1, "a competition or sports result, not a grade")
        if kind == "transcript" and _TEMPLATE_AFTER_RE.match(text[end : min(hi, end + 8)]):
            return finding(0.1, "a template, not someone's transcript")
        subject = subject_of(doc, start, end, self_counts=False)
        if subject.generic and subject.person is None:
            # 数学考了58分: the result verb implies a pupil the teacher is talking about.
            if (
                subject.generic == "no identifiable person"
                and kind.startswith(("score", "rank"))
                and _RESULT_RE.search(text, max(lo, start - 6), end)
                and not _GROUP_RE.search(text, lo, start)
            ):
                return finding(0.6, "a result verb with an implied pupil")
            return finding(0.2, f"generic: {subject.generic}")
        if subject.generic:
            return finding(0.2, f"generic: {subject.generic}")
        assert subject.person is not None
        who = text[subject.person.start : subject.person.end]
        if (
            kind == "transcript"
            and subject.person.kind == "weak"
            and text[subject.person.end : start].strip() != "的"
        ):
            # (a possessed one is someone's: a parent's 孩子的素质报告册)
            return finding(0.3, "a transcript without a specific owner")
        return finding(
            subject.weight, f"{kind} ({trigger})", f"about {who} ({subject.person.kind})"
        )


# What a result falls short of: 差一分满分, 差两分及格.
_SHORT_OF_RE: Final = fast_compile(r"\s*(?:就|到)?(?:满分|及格|上|到)")
# A possessor right before a transcript: 宁宁的学期报告册, Tom's transcript.
_POSSESSIVE_GAP_RE: Final = fast_compile(r"\s*(?:的|'s)\s*[\u4e00-\u9fff]{0,3}\s*$")


def _possessed(doc: Doc, lo: int, start: int) -> bool:
    """An identifiable person owns the transcript starting at ``start`` (their report card
    to sign is theirs, not a notice's): a strong reference, 的 and at most three
    characters before it."""
    text = doc.text
    if "的" not in text[lo:start] and "'s" not in text[lo:start]:
        return False  # no possessive between the sentence start and it: no person owns it
    return any(
        r.weight > 0.6 and r.end <= start and _POSSESSIVE_GAP_RE.match(text, r.end, start)
        for r in persons(doc, lo, doc.sentence(start)[1])
    )


_ROSTER_COUNTS_RE: Final = fast_compile(r"人数|名额|人次|报名|票数|个人|本书|件|张")
# The references a roster's entries can be (a pronoun or a role is no entry of a list).
_ROSTER_KINDS: Final = frozenset({"name", "nickname", "latin", "bracket"})
_FLAGS: Final[dict[str, tuple[bool, bool]]] = {
    kind: (needs, spec) for _, kind, needs, spec in _ITEMS
}
