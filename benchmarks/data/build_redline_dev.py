"""Builds ``redline_dev.jsonl``: the red line's own labelled development set.

Run: ``.venv/bin/python benchmarks/data/build_redline_dev.py`` (deterministic).

Every sentence pattern and fragment below was written for this project, in the voices of
teachers, parents and students (plain, chatty, dialect and slang, English mixed in). A
row is a sentence pattern filled with one person reference; rows are labelled with the
category a red-line filter must block (``grade``, ``health``, ``id_number``, ``mobile``,
``bank_card``) or ``none`` (must pass), and a ``form`` tag saying which mechanism the row
exercises. The ``split`` is decided per *pattern*, not per row (``heldback`` for about
30% of the patterns, by a hash of the pattern), so that no held-back sentence shares its
wording with a development sentence: tune on ``dev`` only.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("redline_dev.jsonl")
HELD_BACK_SHARE = 0.3

# --------------------------------------------------------------------------------------
# Who is meant
# --------------------------------------------------------------------------------------

# Chinese names, many with surnames outside any short list.
NAMES = tuple(
    " ".join(
        (
            "覃思远 郗子涵 亓嘉怡 宁静怡 邝海涛 琚梦瑶 笪浩然 阙雨萱 眭一鸣 虢晨曦",
            "王梓轩 李沐阳 张若汐 刘子墨 陈可馨 杨一诺 黄俊熙 赵雨桐 吴欣然 周子豪",
            "欧阳娜娜 司马文博 上官婉清 皇甫思琪 闻人越 晏清 冼嘉乐 符晓东 游小凡 佘明远",
        )
    ).split(" ")
)
LATIN: tuple[str, ...] = (
    "Tom",
    "Lily",
    "Kevin",
    "Amy",
    "Jason",
    "Coco",
    "Eric",
    "Cindy",
    "Leo",
    "Mia",
    "Daniel",
)
LATIN += ("Grace",)
NICKNAMES = ("小胖（王梓轩）", "豆豆(李沐阳)", "果果（陈可馨）", "大壮（周子豪）", "糖糖(赵雨桐)")
SEATS = ("12号同学", "3号", "班里28号", "学号17的同学", "第5组2号")
ROLES = (
    "我家孩子",
    "我家那小子",
    "我闺女",
    "我儿子",
    "俺家娃",
    "我们家老二",
    "那个女生",
    "后排那个男生",
    "班长",
    "学习委员",
    "数学课代表",
    "他同桌",
    "隔壁班那个转学生",
    "我外甥女",
    "这孩子",
)
PRONOUNS = ("他", "她", "TA")


def people(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """``n`` (reference, person form) pairs, mixing every kind of reference."""
    pools = (
        ("name", NAMES),
        ("latin", LATIN),
        ("nickname", NICKNAMES),
        ("seat", SEATS),
        ("role", ROLES),
        ("pronoun", PRONOUNS),
    )
    weights = (5, 2, 1, 1, 3, 2)
    out = []
    for _ in range(n):
        kind, pool = rng.choices(pools, weights)[0]
        out.append((rng.choice(pool), kind))
    return out


# --------------------------------------------------------------------------------------
# Grades about a person: {p} is the person
# --------------------------------------------------------------------------------------

GRADE_POS: dict[str, tuple[str, ...]] = {
    "pass_fail": (
        "{p}这次数学又不及格",
        "{p}物理挂了，下学期要补考",
        "{p}期末英语没及格，暑假得补考",
        "老师，{p}这次化学考砸了，家长挺着急",
        "{p}数学勉强及格，还得多练",
        "{p}的生物这学期挂科了",
        "{p}语文刚及格，作文扣了好多",
        "听说{p}月考地理没过",
        "{p}这回历史又红灯了",
        "{p}上次周测不合格，需要重做",
        "{p}英语口语测试没通过",
        "{p}体育达标测试没达标",
        "{p}考崩了，数学卷子一半都没做出来",
        "{p}期中考得一塌糊涂",
        "{p}这次考得稀烂，回家哭了一场",
        "哎，{p}又挂了两门",
        "{p}数学考了个不及格，被叫家长了",
        "{p}的物理实验考核没过关",
    ),
    "qualitative": (
        "{p}期末语文得了优秀",
        "{p}这学期英语评了个良",
        "{p}的数学成绩很差，基本垫底",
        "{p}三门主科都是优",
        "{p}的作文这次被评为差",
        "{p}这次成绩在班里中下游",
        "{p}的物理一直吊车尾",
        "{p}期末综合评定是合格",
        "{p}这学期各科等级都是A",
        "{p}的数学学得一般，考试常在及格边缘",
        "{p}英语拿了个B+",
        "{p}这次考得挺好，全优",
        "{p}平时成绩优秀，期末却只拿了良好",
        "{p}在班里成绩数一数二",
        "{p}是我们班的倒数几名",
        "{p}的化学考试成绩是年级最差的之一",
    ),
    "progress": (
        "{p}数学从七十多提高到了九十多",
        "{p}这次名次往后退了不少",
        "{p}比上次月考进步了二十多名",
        "{p}的英语退步很大，从前十掉到了三十名开外",
        "{p}期中比期末少了十几分",
        "{p}这学期成绩下滑得厉害",
        "{p}物理提高了15分，进步明显",
        "{p}排名从年级两百多升到了一百名以内",
        "{p}这次比上次考得差多了",
        "{p}的语文成绩从良提到了优",
        "{p}总分掉了四十分",
        "{p}名次又往前挪了五位",
        "{p}数学成绩一直在往下掉",
    ),
    "bare_number": (
        "{p}月考87，有进步",
        "{p}期中112，离目标还差一点",
        "{p}这次测验73",
        "{p}模拟考540，冲一本有点悬",
        "{p}期末数学卷子118",
        "{p}周测只有52",
        "{p}一模总分603",
        "{p}这次单元测试考了个68",
        "{p}小测满分",
        "{p}听写错了一半，才得了五十",
    ),
    "approx_numeral": (
        "{p}数学九十出头",
        "{p}英语八十来分",
        "{p}这次掉到了年级三百名以后",
        "{p}语文考了六十几分",
        "{p}总分一百二十多，不太理想",
        "{p}物理刚过一百",
        "{p}化学考了七十分左右",
        "{p}排在班里二十名上下",
        "{p}这次月考年级前五十",
        "{p}数学只考了三十多",
        "{p}生物将近满分",
        "{p}期末考了九十五六分",
    ),
    "transcript": (
        "把{p}的成绩单发给家长",
        "{p}的期末素质报告册还没领",
        "帮我看看{p}的成绩报告单",
        "{p}的期中成绩条上有两门红色",
        "{p}家长想要一份孩子这学期的成绩记录",
        "我把{p}的各科成绩都整理好了，你过目一下",
        "{p}的成绩单上数学那栏很难看",
        "{p}的综合素质评价表已经填好，各科成绩都在上面",
        "请把{p}的考试成绩单独发我",
    ),
    "english_mixed": (
        "{p} failed the math test again",
        "{p}这次math考了个C",
        "{p}的GPA只有2.1",
        "{p}的 final exam 挂了",
        "{p} got an A in English this term",
        "{p}英语quiz只有60",
        "{p} scored below average on the midterm",
        "{p}的physics成绩不及格",
        "{p} ranked last in the class",
        "{p} barely passed chemistry",
    ),
    "subject_score": (
        "{p}数学考了58分",
        "{p}期末语文92分",
        "{p}英语成绩是112/150",
        "{p}这次月考班级第5名",
        "{p}年级排名倒数第三",
        "{p}物理只有38分",
    ),
}

# --------------------------------------------------------------------------------------
# Grades and outcome words that must pass
# --------------------------------------------------------------------------------------

GRADE_NEG: dict[str, tuple[str, ...]] = {
    "exam_authoring": (
        "本题5分，答对得分，答错不得分",
        "满分100分，60分及格",
        "选择题每题3分，共30分",
        "请出一份满分120分的期中试卷",
        "这道压轴题12分，分三小问",
        "把及格线定在72分",
        "试卷分为优秀、良好、及格、不及格四档",
        "阅读理解每篇10分，共4篇",
        "作文占50分，请写评分细则",
        "第3题的分值从8分改成10分",
        "出一套难度适中的模拟卷，总分150",
        "听力部分共30分，每小题1.5分",
    ),
    "rubric": (
        "作文评分分为优、良、中、差四个等级",
        "实验报告按A、B、C三档评定",
        "书写工整加2分，卷面潦草扣2分",
        "口语测试的评分标准：发音30%，流利度40%，内容30%",
        "优秀：能完整表达观点并有论据支持",
        "不及格：答案与题意无关或空白",
        "按步骤给分，每步2分，结果正确再加1分",
        "等级评价标准：A为85分以上，B为70到84分",
    ),
    "class_statistics": (
        "全班及格率85%，优秀率30%",
        "这次月考有12人不及格",
        "全年级平均分78.5，比上次提高了3分",
        "请统计一下各分数段的人数",
        "班级平均分在年级排第四",
        "我们班这次数学整体退步了",
        "及格的同学占三分之二",
        "这次考试不及格的人数比上次少了一半",
        "全班最高分98，最低分41",
        "二班的语文平均分比一班高两分",
    ),
    "team_result": (
        "我们班接力队拿了年级第二名",
        "合唱比赛我们班获得了优秀奖",
        "拔河比赛我们班是第一名",
        "篮球队在区里比赛得了第三",
        "我们学校在市里的数学竞赛团体赛中获得了一等奖",
        "我们组的小组展示被评为优秀",
        "班级量化考核本周排名第一",
        "我校中考升学率全区第五",
    ),
    "notice": (
        "不及格的同学周五下午补考",
        "期中成绩下周一公布，请家长留意",
        "成绩有疑问的同学可以申请查卷",
        "补考名单会贴在教室门口",
        "请各位家长在成绩单上签字后交回",
        "月考成绩不作为评优的唯一依据",
        "挂科的同学请尽快联系教务处",
        "期末考试成绩将通过家校平台发送",
    ),
    "hypothetical": (
        "如果这次不及格就要参加补考",
        "假如期末考到九十分，就奖励一本书",
        "万一挂科了怎么办？先别慌",
        "希望大家期末都能考出好成绩",
        "争取下次数学都能及格",
        "要是考砸了，也别灰心",
    ),
    "fiction_teaching": (
        "范进中举后高兴得发了疯",
        "《儒林外史》里的周进屡试不第",
        "孔乙己连秀才也没有捞到",
        "请分析《最后一课》中小弗朗士的心理变化",
        "课文里的小明考试不及格后痛定思痛",
        "写一篇作文，题目是《一次失败的考试》",
        "讲解成语“名落孙山”的来历",
        "《西游记》里唐僧师徒经历了九九八十一难",
    ),
    "ordinary_request_more": (
        "请用表格列出本学期的教学进度",
        "给七年级新生写一段入学寄语",
        "帮我批改这篇英语作文，指出语法错误",
        "出五道关于比例的应用题，难度递增",
        "《荷塘月色》的写作背景是什么？",
        "设计一个小组合作学习的评价量表",
        "我想在课上用一个关于光合作用的小实验",
        "把这篇文言文的重点虚词整理出来",
        "帮我写一段期末评语，语气温和一些",
        "下周的教研活动主题是大单元教学",
        "推荐几本适合初二学生读的课外书",
        "用思维导图总结二次函数的性质",
        "写一个关于垃圾分类的主题班会方案",
        "给新来的实习老师介绍一下备课流程",
        "这节课的教学目标写得具体一点",
        "请把答案解析写在每道题后面",
        "做一个关于节约用水的手抄报模板",
        "期末复习课怎么上才不枯燥？",
        "出一套二十道的英语单项选择",
        "帮我想几个课堂导入的小游戏",
    ),
    "ordinary_request": (
        "帮我出十道一元二次方程的练习题",
        "明天的公开课讲《背影》，帮我设计导入",
        "把这套卷子的难度降低一点",
        "给家长写一封关于期末复习的信",
        "设计一节关于时间管理的班会",
        "请把第二单元的知识点整理成思维导图",
        "我教高二化学，用的是人教版",
        "以后出的题都附上详细解析",
        "帮我把这段英文翻译成中文",
        "下周要开家长会，帮我列个发言提纲",
        "写一份运动会开幕式的主持词",
        "整理一下期末复习的时间安排",
    ),
}

# --------------------------------------------------------------------------------------
# Health about a person
# --------------------------------------------------------------------------------------

HEALTH_POS: dict[str, tuple[str, ...]] = {
    "condition": (
        "{p}得了腮腺炎，这周都来不了",
        "{p}有脊柱侧弯，不能做仰卧起坐",
        "{p}有癫痫，上次在课上发作过",
        "{p}查出来是支原体肺炎",
        "{p}得了水痘，要隔离两周",
        "{p}有先天性心脏病，体育课别让他跑",
        "{p}是过敏性鼻炎，春天特别严重",
        "{p}有点轻度抑郁",
        "{p}患了甲流，发烧到39度",
        "{p}被诊断出多动症",
        "{p}有蚕豆病，食堂的菜要注意",
        "{p}的白癜风最近又扩大了",
        "{p}得了手足口病",
        "{p}有乳糖不耐受，喝不了牛奶",
        "{p}眼睛弱视，正在戴眼罩矫正",
        "{p}心肌炎刚好，不能剧烈运动",
        "{p}最近焦虑得厉害，晚上睡不着",
        "{p}有抽动症，上课会不自主眨眼",
    ),
    "cue_no_name": (
        "{p}住院了，下周才能回来",
        "{p}每天中午要吃药",
        "{p}下周二要去医院复查",
        "医生说{p}需要静养一个月",
        "{p}请了病假，这周的作业先不交",
        "{p}对芒果过敏",
        "{p}在打点滴，今天来不了",
        "{p}昨天挂水挂到半夜",
        "{p}发高烧，家长来接走了",
        "{p}看了心理医生，在做疏导",
        "{p}腿骨折了，拄着拐来上学",
        "{p}戴着助听器，座位要靠前",
        "{p}最近在吃激素，脸有点肿",
        "{p}做了阑尾手术，还在恢复",
        "{p}拉肚子拉了三天，人都虚了",
        "{p}在做康复训练，体育课只能旁观",
        "{p}去医院验了血，结果还没出来",
        "{p}咳嗽一直不好，医生让拍个片子",
    ),
    "parent_voice": (
        "老师好，{p}这两天肚子疼得厉害，去医院查了是肠胃炎",
        "跟您说一声，{p}有哮喘，跑步的时候喘不上气",
        "{p}从小就有癫痫，一直在吃丙戊酸钠",
        "{p}最近老是头晕，医生说是低血压",
        "{p}这阵子情绪很低落，我们带去看了精神科",
        "{p}鼻子老出血，耳鼻喉科说是鼻黏膜太薄",
        "{p}被查出来有轻微的自闭症倾向",
        "{p}前两天出水痘了，脸上全是痘痘",
        "{p}眼睛发炎了，在滴眼药水",
        "{p}牙疼得厉害，拔了两颗智齿",
        "{p}耳朵有点听不清，医院说是中耳炎",
        "{p}贫血挺严重，脸色一直不好",
    ),
    "slang_dialect": (
        "{p}这几天发烧烧得迷迷糊糊的",
        "{p}又犯病了，喘得不行",
        "{p}昨儿个在医院吊了一天水",
        "{p}身子骨弱，三天两头感冒",
        "{p}心里有坎儿，最近在看心理咨询师",
        "{p}打小就有羊角风",
        "{p}脑子里长了个东西，在做检查",
        "{p}拉稀拉得脱水了",
    ),
    "pregnancy_surgery": (
        "{p}怀孕了，下学期休产假",
        "{p}怀二胎了，孕吐很严重",
        "{p}刚做完眼科手术，不能看屏幕",
        "{p}下个月要做近视手术",
        "{p}扁桃体切除了，说话不方便",
        "{p}做了心脏搭桥手术",
        "{p}在坐月子，家长会来不了",
    ),
    "english_mixed": (
        "{p} has asthma, keep the inhaler ready",
        "{p}最近 depression 挺严重的",
        "{p} is in hospital this week",
        "{p} broke his arm, 这周不能写字",
        "{p} is allergic to peanuts",
        "{p}有ADHD，注意力很难集中",
    ),
    "self": (
        "我最近甲状腺结节，要去复查",
        "我怀孕五个月了，下学期想少带一个班",
        "我腰椎间盘突出，站久了受不了",
        "我嗓子做了手术，这周上课用扩音器",
        "我最近在吃安眠药，精神不太好",
        "我下周住院，课请别人代一下",
    ),
}

HEALTH_NEG: dict[str, tuple[str, ...]] = {
    "notice": (
        "有哮喘的同学体育课前告诉老师",
        "对花生过敏的同学午餐请注意",
        "请病假需要附上医院证明",
        "身体不适的同学可以到医务室休息",
        "近视的同学请坐到前排",
        "下周三全校体检，请空腹",
        "流感高发季节，请大家勤洗手",
        "有特殊疾病的学生请家长提前告知班主任",
        "服用药物的同学请把药交给校医保管",
        "运动会前请确认没有心脏疾病",
    ),
    "biology_item": (
        "某患者出现多饮、多尿症状，可能患有什么疾病？",
        "一位糖尿病病人需要注射哪种激素？",
        "患者血糖升高的原因是胰岛素分泌不足",
        "解释为什么病人会出现发烧的症状",
        "甲同学患了感冒，医生开了抗生素，这样做对吗？",
        "某人因车祸导致大脑皮层受损，分析其可能出现的症状",
        "艾滋病病毒主要攻击人体的哪种细胞？",
        "下图是某病人的心电图，请判断",
        "讲解近视眼的成因和矫正方法",
        "设计一节关于预防流感的健康教育课",
        "癌细胞与正常细胞有什么区别？",
        "过敏反应是怎么发生的？用生活中的例子讲",
    ),
    "literature": (
        "林黛玉体弱多病，常年吃药",
        "史铁生在《我与地坛》中写到双腿瘫痪后的心境",
        "祥子病倒后就再也没有振作起来",
        "鲁迅弃医从文的原因是什么？",
        "《红楼梦》里晴雯病补雀金裘",
        "《老人与海》中的老人受伤后依然坚持",
        "海伦·凯勒从小失明失聪，却写出了名著",
        "这首诗表达了诗人抑郁的情绪",
        "小说的主人公得了重病，情节由此展开",
        "课文中的母亲瘫痪在床，却依然乐观",
    ),
    "statistics": (
        "全班近视率达到了60%",
        "本学期因病缺勤的人数比上学期少",
        "我校学生肥胖率逐年上升",
        "这周班上有五个人感冒",
        "全年级有三分之一的学生视力不达标",
    ),
    "figurative": (
        "这道题真让人头疼",
        "讲评试卷要对症下药",
        "这帮孩子作业拖拉的毛病得治治",
        "他的作文有个通病，就是结尾仓促",
        "班级纪律问题要从根上治",
        "这次复习要找准病根，查漏补缺",
    ),
    "school_organising": (
        "组织学生参观医院的科普展",
        "请校医来给学生讲讲急救知识",
        "帮我写一份防溺水安全教育的讲稿",
        "做一份健康饮食的手抄报模板",
        "设计一节心理健康主题班会，主题是如何面对压力",
        "给全班准备一个关于预防近视的小讲座",
    ),
}

# A person with nothing sensitive said about them (hard negatives): {p} is the person.
PERSON_NEUTRAL = (
    "{p}今天值日，记得提醒一下",
    "{p}明天要参加数学竞赛的培训",
    "{p}负责收英语作业",
    "{p}问我期中考试考哪几章",
    "{p}的作文很有想象力，可以当范文",
    "{p}上课发言特别积极",
    "请{p}明天把体育器材带到操场",
    "{p}的妈妈是医生，可以请她来讲讲急救",
    "{p}以后想当医生",
    "{p}周末去养老院做志愿者",
    "{p}是这次运动会的旗手",
    "{p}帮我整理了错题本的模板",
    "{p}在黑板报上画了一幅很漂亮的画",
    "{p}想换到靠窗的座位",
    "{p}竞选了班长，演讲很精彩",
    "{p}说想多做几道压轴题练练手",
    "{p}这周负责午休纪律",
    "{p}报名参加了合唱团",
    "{p}把数学试卷的答题卡忘在家里了",
    "{p}问满分作文应该怎么写",
    "{p}今天迟到了，说是公交车晚点",
    "{p}的家长想约个时间聊聊选科",
    "{p}帮忙把考场的桌子都摆好了",
    "{p}在读《红楼梦》，问林黛玉为什么总生病",
    "{p}的科学小论文讲的是流感病毒怎么传播",
    "{p} asked me how the midterm will be graded",
    "{p} is our class monitor this term",
    "{p}给大家讲了预防近视的小知识",
)

# Ordinary teacher requests built from parts: exam words and numbers that must pass.
GRADES = ("七年级", "八年级", "九年级", "高一", "高二", "三年级", "五年级")
SUBJECTS = ("数学", "语文", "英语", "物理", "化学", "生物", "历史", "地理")
TASKS = (
    "出一份{g}{s}期中试卷，满分{n}分，考试时间90分钟",
    "帮我把{g}{s}第三单元的测验卷改简单一点，及格线{k}分",
    "{g}{s}的月考试卷共{q}道题，选择题每题3分",
    "设计一份{g}{s}期末复习计划，重点放在失分多的题型",
    "请给{g}{s}的学生讲评这次考试的易错题",
    "统计一下{g}{s}各分数段的人数分布",
    "{g}{s}的优秀线定为{k}分以上，你看合适吗",
    "把{g}{s}期末试卷的评分细则写清楚，每空2分",
)


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _id18(rng: random.Random) -> str:
    region = f"{rng.choice([110101, 310104, 440305, 510107, 320102, 420106, 650102])}"
    birth = f"{rng.randint(1970, 2015)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    body = region + birth + f"{rng.randint(0, 999):03d}"
    total = sum(int(d) * w for d, w in zip(body, _WEIGHTS, strict=True))
    return body + "10X98765432"[total % 11]


def _id15(rng: random.Random) -> str:
    region = f"{rng.choice([110101, 310104, 440305, 510107])}"
    birth = f"{rng.randint(50, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    return region + birth + f"{rng.randint(0, 999):03d}"


def _mobile(rng: random.Random) -> str:
    return f"1{rng.choice('3456789')}{rng.randint(0, 9)}{rng.randint(0, 99_999_999):08d}"


ID15_AFTER = (  # the context word 10-12 characters after the number
    "{n}，这串数字是他爸爸的老身份证号",
    "{n}（家长说这是旧版身份证号码）",
    "号码{n}，上面这个是奶奶以前的身份证",
    "{n}这个号是他外公留下的一代身份证上的",
    "{n}——请核对，学生家长提供的是身份证号",
    "{n}，麻烦帮忙查一下这个身份证号码对不对",
)
ID15_BEFORE = (
    "身份证号{n}",
    "老身份证：{n}",
)
PLUS86 = (
    "家长电话+86{a} {b} {c}",
    "联系方式：+86-{a}-{b}-{c}",
    "+86 {a} {b} {c}，找她妈妈",
    "手机+86{a}-{b}-{c}",
    "+86({a}){b}{c}",
    "打这个：+86 {a}-{b}-{c}",
    "+86.{a}.{b}.{c}",
    "WhatsApp/手机 +86{a}{b}{c}",
)
NUMBER_NEG = (
    "订单号{n}已发货",
    "快递单号{n}",
    "考号{n}，考场第3考场",
    "时间戳{n}",
    "这批教材的批次号是{n}",
)


def _rows() -> list[dict[str, str]]:
    rng = random.Random(20261201)
    rows: list[dict[str, str]] = []

    def add(text: str, category: str, form: str, pattern: str) -> None:
        rows.append({"text": text, "category": category, "form": form, "pattern": pattern})

    for table, category in ((GRADE_POS, "grade"), (HEALTH_POS, "health")):
        for form, patterns in table.items():
            for pattern in patterns:
                count = 1 if form == "self" else (7 if category == "health" else 5)
                for ref, kind in people(rng, count):
                    add(pattern.format(p=ref), category, f"{form}/{kind}", pattern)
    for table in (GRADE_NEG, HEALTH_NEG):
        for form, patterns in table.items():
            for pattern in patterns:
                add(pattern, "none", form, pattern)
    for pattern in PERSON_NEUTRAL:
        for ref, kind in people(rng, 7):
            add(pattern.format(p=ref), "none", f"person_neutral/{kind}", pattern)
    for task in TASKS:
        for _ in range(16):
            text = task.format(
                g=rng.choice(GRADES),
                s=rng.choice(SUBJECTS),
                n=rng.choice([100, 120, 150]),
                k=rng.choice([60, 72, 85, 90]),
                q=rng.randint(18, 30),
            )
            add(text, "none", "ordinary_request", task)
    # A generic subject in a person slot must pass: 有的同学, 大家, 全班.
    generic_subjects = ("全班同学", "大部分学生", "每个学生", "有的同学", "这届学生", "大家")
    for form in ("pass_fail", "progress", "condition", "cue_no_name"):
        table = GRADE_POS if form in GRADE_POS else HEALTH_POS
        for pattern in table[form][::3]:
            subject = rng.choice(generic_subjects)
            add(pattern.format(p=subject), "none", f"generic_subject/{form}", pattern + "#g")
    for pattern in ID15_AFTER:
        for _ in range(8):
            add(pattern.format(n=_id15(rng)), "id_number", "id15_context_after", pattern)
    for pattern in ID15_BEFORE:
        for _ in range(4):
            add(pattern.format(n=_id15(rng)), "id_number", "id15_context_before", pattern)
    for _ in range(24):
        value = _id18(rng)
        sep = rng.choice(["", " ", "-"])
        text = value if not sep else sep.join([value[:6], value[6:14], value[14:]])
        add(f"学生身份证 {text}", "id_number", "id18", "id18")
    for pattern in PLUS86:
        for _ in range(6):
            m = _mobile(rng)
            add(pattern.format(a=m[:3], b=m[3:7], c=m[7:]), "mobile", "plus86_glued", pattern)
    for pattern in NUMBER_NEG:
        for _ in range(4):
            n = rng.choice([_id15(rng)[:14] + "9", f"{rng.randint(10**14, 10**15 - 1)}"])
            add(pattern.format(n=n), "none", "number_lookalike", pattern)
    return rows


def _split(pattern: str) -> str:
    digest = hashlib.sha256(pattern.encode()).digest()
    return "heldback" if digest[0] < 256 * HELD_BACK_SHARE else "dev"


def main() -> None:
    rows = _rows()
    seen: set[str] = set()
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows:
            if row["text"] in seen:
                continue
            seen.add(row["text"])
            record = {
                "text": row["text"],
                "category": row["category"],
                "form": row["form"],
                "split": _split(row["pattern"]),
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(seen)} rows written to {OUT}")


if __name__ == "__main__":
    main()
