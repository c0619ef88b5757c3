"""A teacher-style development set for episodic recall, generated (deterministic, seeded).

Run from the project root to look at it::

    .venv/bin/python benchmarks/recall_teacher_data.py --stats
    .venv/bin/python benchmarks/recall_teacher_data.py --dump 3     # one scope's runs/queries

``benchmarks/recall_eval.py`` imports :func:`generate` (nothing is written to disk).

What it models: 36 teachers (memory scopes) across primary, junior and senior school and
fourteen subjects, a few in English. Each teacher works in threads: a first request of one
of the kinds teachers make (exams and quizzes, lesson plans, homework, corrections and
essay marking, notices, parent letters, class meetings, report comments, activity plans,
rubrics) on a topic of their subject or of school life, then zero to five follow-ups in the
same thread ("简答题换两道", "难度降一点", "加上答案"), each a run with the head of an
answer. 200-300 runs per teacher; one teacher in four is new (8-40 runs).

Questions (each with the thread it is asked in, if any):

* ``paraphrase``: a new thread that refers back to an earlier piece of work in other
  words: by a topic's key terms instead of its name, another word for the kind ("小测"
  for "单元测验"), the class, and a vague pointer ("之前那份", "上回").
* ``vague``: a thread about a topic (one or two earlier turns of another kind of work),
  then a vague follow-up ("像上次那样出一份测验", "还是那个班，再来一份"): the relevant
  past run is the earlier work of that kind on that topic, in another thread.
* ``none``: no relevant past run: a topic of the teacher's subject (or a school matter)
  that the teacher never worked on, asked with the same phrasing. The gate must not fire.

Relevance: every run of the threads of that kind of work on that topic. False injection
is measured by asking the answerable questions against another teacher, of another
subject, who never worked on that topic (school matters are shared by every teacher).
Vocabularies are written for this file; no evaluation set was looked at to write them.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

SEED = 20261201
N_SCOPES = 36

# subject -> topic -> key terms (words a teacher uses when talking about the topic)
TOPICS: dict[str, dict[str, list[str]]] = {
    "语文": {
        "古诗词鉴赏": ["意象", "借景抒情", "炼字", "颔联"],
        "文言文阅读": ["实词", "虚词", "通假字", "断句"],
        "议论文写作": ["论点", "论据", "论证方法", "分论点"],
        "记叙文阅读": ["线索", "人物描写", "插叙", "中心思想"],
        "病句修改": ["成分残缺", "搭配不当", "语序不当", "句式杂糅"],
        "《红楼梦》导读": ["宝玉", "黛玉", "大观园", "判词"],
        "《背影》": ["朱自清", "父亲", "橘子", "月台"],
        "修辞手法": ["比喻", "拟人", "排比", "夸张"],
        "口语交际": ["倾听", "表达", "即兴发言", "礼貌用语"],
        "拼音复习": ["声母", "韵母", "整体认读音节", "声调"],
        "看图写话": ["图画", "时间地点", "人物动作", "想象"],
        "《论语》十二章": ["孔子", "君子", "学而时习之", "仁"],
    },
    "数学": {
        "二次函数": ["抛物线", "顶点坐标", "对称轴", "判别式"],
        "三角函数": ["正弦", "余弦", "诱导公式", "周期"],
        "概率统计": ["频率", "方差", "样本", "古典概型"],
        "立体几何": ["三视图", "二面角", "线面垂直", "棱锥"],
        "数列": ["等差数列", "等比数列", "通项公式", "前n项和"],
        "导数": ["切线", "单调性", "极值", "最值"],
        "一元二次方程": ["配方法", "求根公式", "因式分解", "根与系数"],
        "勾股定理": ["直角三角形", "斜边", "勾股数", "逆定理"],
        "分数的意义": ["分子", "分母", "单位1", "通分"],
        "圆的面积": ["半径", "圆周率", "直径", "扇形"],
        "鸡兔同笼": ["假设法", "列表法", "脚的只数", "头的个数"],
        "全等三角形": ["SAS", "ASA", "对应边", "辅助线"],
        "圆锥曲线": ["椭圆", "双曲线", "离心率", "焦点"],
        "小数乘法": ["积的小数位数", "竖式", "估算", "进位"],
    },
    "英语": {
        "定语从句": ["关系代词", "which", "that", "先行词"],
        "一般过去时": ["过去式", "yesterday", "不规则动词", "时间状语"],
        "阅读理解": ["主旨大意", "细节理解", "推理判断", "词义猜测"],
        "完形填空": ["上下文", "固定搭配", "语篇", "逻辑关系"],
        "书面表达": ["开头句", "连接词", "高级词汇", "卷面"],
        "被动语态": ["be done", "by短语", "主动变被动", "情态动词"],
        "虚拟语气": ["if条件句", "wish", "would have done", "与事实相反"],
        "自然拼读": ["字母组合", "元音", "辅音", "拼读规则"],
        "Unit 5 Do you want to watch a game show": ["sitcom", "news", "plan", "expect"],
        "现在完成时": ["have done", "since", "for", "already"],
    },
    "物理": {
        "牛顿第二定律": ["加速度", "合外力", "质量", "F=ma"],
        "电磁感应": ["楞次定律", "感应电流", "磁通量", "法拉第"],
        "光的折射": ["折射角", "入射角", "透镜", "全反射"],
        "动量守恒": ["碰撞", "冲量", "反冲", "系统"],
        "欧姆定律": ["电阻", "电压", "电流表", "串联并联"],
        "浮力": ["阿基米德原理", "排开液体", "密度", "漂浮"],
        "机械能守恒": ["动能", "势能", "重力做功", "摩擦"],
        "压强": ["受力面积", "液体压强", "大气压", "帕斯卡"],
        "电功率": ["额定功率", "焦耳定律", "电能表", "千瓦时"],
    },
    "化学": {
        "氧化还原反应": ["得失电子", "氧化剂", "还原剂", "化合价"],
        "元素周期律": ["周期表", "原子半径", "金属性", "主族"],
        "化学平衡": ["勒夏特列原理", "平衡常数", "转化率", "可逆反应"],
        "酸碱盐": ["中和反应", "pH", "指示剂", "复分解"],
        "有机化学基础": ["官能团", "同分异构体", "乙醇", "酯化反应"],
        "物质的量": ["摩尔", "阿伏加德罗常数", "摩尔质量", "气体体积"],
        "实验室制取氧气": ["高锰酸钾", "排水法", "催化剂", "集气瓶"],
        "电解质溶液": ["离子方程式", "水解", "电离", "沉淀溶解平衡"],
    },
    "生物": {
        "光合作用": ["叶绿体", "光反应", "暗反应", "二氧化碳"],
        "细胞呼吸": ["线粒体", "有氧呼吸", "无氧呼吸", "ATP"],
        "遗传规律": ["孟德尔", "显性", "隐性", "分离定律"],
        "生态系统": ["食物链", "生产者", "分解者", "能量流动"],
        "细胞分裂": ["有丝分裂", "减数分裂", "染色体", "纺锤体"],
        "人体的免疫": ["抗体", "抗原", "疫苗", "淋巴细胞"],
        "植物的生殖": ["传粉", "受精", "种子", "扦插"],
        "显微镜的使用": ["目镜", "物镜", "对光", "装片"],
    },
    "历史": {
        "辛亥革命": ["孙中山", "武昌起义", "中华民国", "三民主义"],
        "工业革命": ["蒸汽机", "瓦特", "工厂制度", "英国"],
        "丝绸之路": ["张骞", "西域", "商队", "敦煌"],
        "秦朝统一": ["秦始皇", "郡县制", "统一文字", "度量衡"],
        "新文化运动": ["陈独秀", "新青年", "民主科学", "白话文"],
        "抗日战争": ["卢沟桥", "全民族抗战", "台儿庄", "百团大战"],
        "文艺复兴": ["但丁", "达芬奇", "人文主义", "佛罗伦萨"],
        "唐朝盛世": ["贞观之治", "开元盛世", "长安", "科举"],
    },
    "地理": {
        "地球的运动": ["自转", "公转", "昼夜交替", "黄赤交角"],
        "气候类型": ["季风气候", "降水", "气温曲线", "热带雨林"],
        "等高线地形图": ["山脊", "山谷", "陡坡", "海拔"],
        "中国的河流": ["长江", "黄河", "流域", "水文特征"],
        "人口与城市": ["人口密度", "城市化", "迁移", "老龄化"],
        "板块运动": ["六大板块", "地震", "火山", "张裂"],
    },
    "道德与法治": {
        "宪法": ["根本大法", "公民权利", "国家机构", "宪法宣誓"],
        "青春期": ["心理变化", "情绪管理", "自我认识", "异性交往"],
        "网络生活": ["网络沉迷", "个人信息", "谣言", "网络交往"],
        "未成年人保护": ["家庭保护", "学校保护", "司法保护", "维权"],
        "诚信": ["诚实守信", "契约", "信用", "守诺"],
    },
    "信息技术": {
        "Python入门": ["变量", "print", "input", "缩进"],
        "循环结构": ["for循环", "while", "range", "累加"],
        "数据结构": ["二叉树", "链表", "栈", "队列"],
        "Scratch编程": ["角色", "舞台", "积木", "广播"],
        "网络安全": ["密码", "病毒", "钓鱼网站", "防火墙"],
        "电子表格": ["公式", "函数", "排序", "图表"],
    },
    "音乐": {
        "《茉莉花》": ["民歌", "五声调式", "江苏", "旋律"],
        "节奏训练": ["四分音符", "八分音符", "节拍", "打拍子"],
        "合唱": ["声部", "和声", "音准", "指挥"],
        "西洋乐器": ["小提琴", "长笛", "交响乐", "铜管"],
    },
    "美术": {
        "水彩画": ["调色", "湿画法", "晕染", "留白"],
        "剪纸": ["对称", "窗花", "阴刻", "阳刻"],
        "透视": ["消失点", "近大远小", "一点透视", "视平线"],
        "色彩搭配": ["三原色", "冷暖色", "对比色", "色环"],
    },
    "体育": {
        "跳绳": ["单摇", "双摇", "节奏", "计数"],
        "篮球运球": ["低运球", "变向", "护球", "手型"],
        "立定跳远": ["摆臂", "蹬地", "落地缓冲", "起跳"],
        "800米跑": ["配速", "呼吸节奏", "冲刺", "耐力"],
        "广播体操": ["动作要领", "队形", "口令", "节拍"],
    },
    "科学": {
        "植物的一生": ["发芽", "根茎叶", "开花结果", "种子"],
        "声音的产生": ["振动", "音调", "音量", "传播"],
        "简单电路": ["电池", "小灯泡", "导线", "开关"],
        "水的三态": ["蒸发", "凝固", "融化", "沸腾"],
        "月相变化": ["新月", "满月", "上弦月", "农历"],
    },
}

# School life: matters any teacher deals with (notices, letters, class meetings).
SCHOOL: dict[str, list[str]] = {
    "家长会": ["家长会", "签到", "成绩分析", "教室"],
    "运动会": ["运动会", "报名", "项目", "入场式"],
    "春游": ["春游", "集合", "安全", "自带午餐"],
    "期末考试安排": ["期末考试", "考场", "复习", "作息"],
    "寒假安排": ["寒假", "作业", "安全", "返校"],
    "防溺水安全": ["防溺水", "河塘", "游泳", "监护"],
    "流感预防": ["流感", "通风", "洗手", "晨检"],
    "手机管理": ["手机", "作息", "沉迷", "约定"],
    "阅读习惯": ["课外阅读", "亲子共读", "书目", "读书笔记"],
    "校服订购": ["校服", "尺码", "缴费", "冬装"],
    "研学旅行": ["研学", "博物馆", "行程", "分组"],
    "作业减负": ["作业时长", "双减", "分层作业", "睡眠"],
}

GRADES = {
    "primary": ["一年级", "二年级", "三年级", "四年级", "五年级", "六年级"],
    "junior": ["初一", "初二", "初三", "七年级", "八年级", "九年级"],
    "senior": ["高一", "高二", "高三"],
}
PRIMARY_SUBJECTS = ["语文", "数学", "英语", "科学", "音乐", "美术", "体育"]

KIND_WORDS: dict[str, list[str]] = {
    "exam": ["单元测验", "试卷", "小测", "练习卷", "测试题", "周测", "卷子"],
    "lesson": ["教案", "教学设计", "说课稿", "导学案", "课件提纲"],
    "homework": ["作业", "课后练习", "分层作业", "预习单"],
    "correction": ["批改", "错题分析", "订正讲评", "作文批改"],
    "notice": ["通知", "告知书", "温馨提示"],
    "letter": ["家长信", "致家长的一封信", "给家长的话"],
    "meeting": ["主题班会", "班会方案", "班会课"],
    "comment": ["期末评语", "学生评语", "成长寄语"],
    "activity": ["活动方案", "课堂活动", "游戏设计", "实践活动"],
    "rubric": ["评分标准", "评价量表", "评分细则"],
}
SUBJECT_KINDS = ["exam", "lesson", "homework", "correction", "activity", "rubric"]
SCHOOL_KINDS = ["notice", "letter", "meeting", "comment"]

FOLLOW_UPS = [
    "简答题换两道",
    "难度降低一点",
    "加上参考答案",
    "再加三道拓展题",
    "把第二题改得更贴近生活",
    "字数压缩到三百字以内",
    "语气再亲切一些",
    "分成基础题和提高题两部分",
    "加一个小组讨论环节",
    "时间改成四十分钟",
    "格式改成表格",
    "最后加一句感谢家长的话",
    "题目数量减半",
    "增加一道开放性问题",
    "换一个导入方式",
    "帮我检查一下有没有错别字",
    "把评分细则写得具体点",
    "再出一套B卷",
]
FOLLOW_UPS_EN = [
    "Make it a bit easier",
    "Add an answer key",
    "Shorten it to one page",
    "Add two more challenge questions",
    "Make the tone friendlier",
    "Turn it into a table",
]

VAGUE = [
    "像上次那样出一份{kind}",
    "还是那个班，再来一份{kind}",
    "按之前那个格式再做一份{kind}",
    "跟上回的{kind}差不多就行，题目换一换",
    "照着以前给他们做的那份{kind}来",
    "之前那份{kind}挺好用的，再来一份类似的",
    "参考我们以前的{kind}，给这个班也弄一份",
    "把上学期那个{kind}找出来改一改",
]
VAGUE_EN = [
    "Same as last time, make another {kind}",
    "Like the {kind} we did before, but new questions",
    "Can you redo that {kind} from before for this class?",
]
PARAPHRASE = [
    "之前给{cls}做的那份讲{k1}和{k2}的{kind}还在吗？再来一份新的",
    "上回那个关于{k1}的{kind}，帮我改成{kind2}",
    "记得我们做过一份{k1}、{k2}相关的{kind}吧，按那个思路再出一份",
    "{cls}下周还要用{k1}的{kind}，在原来那份基础上调整一下",
    "以前那份涉及{k2}的{kind}，学生反映太难了，重新弄一份",
    "找一下我之前关于{k1}的{kind}，我想给另一个班也用",
    "再给{cls}来一份{k1}方面的{kind}，和以前那份别重复",
]
PARAPHRASE_EN = [
    "Remember the {kind} on {k1} and {k2}? Make a new version.",
    "Find the {kind} I made about {k1} before and adapt it for another class.",
]
NEW_REQUEST = [
    "给{cls}出一份{topic}的{kind}",
    "帮我写一份{topic}的{kind}，{cls}用",
    "准备{cls}{topic}的{kind}，重点是{k1}和{k2}",
    "{cls}下周学{topic}，先做一份{kind}",
    "请设计一份关于{topic}的{kind}，要涉及{k1}",
    "我需要一份{topic}{kind}，面向{cls}，{n}道题左右",
]
NEW_SCHOOL = [
    "帮我写一份{topic}的{kind}，发给{cls}家长",
    "{cls}要搞{topic}相关的{kind}，帮我起草",
    "起草一份{kind}，内容是{topic}，注意写清{k1}和{k2}",
    "关于{topic}，给{cls}准备一份{kind}",
]
NEW_EN = [
    "Write a {kind} on {topic} for {cls}, focus on {k1}",
    "I need a {kind} about {topic} for my {cls} students",
    "Please draft a {kind}: {topic}, including {k1} and {k2}",
]
KIND_EN = {
    "exam": ["quiz", "test", "worksheet"],
    "lesson": ["lesson plan", "teaching plan"],
    "homework": ["homework", "practice sheet"],
    "correction": ["feedback on the essays", "error analysis"],
    "notice": ["notice"],
    "letter": ["letter to parents"],
    "meeting": ["class meeting plan"],
    "comment": ["report comments"],
    "activity": ["class activity"],
    "rubric": ["rubric"],
}
NONE_GENERIC = [
    "怎样提高学生上课的专注力？",
    "最近总觉得很累，怎么平衡工作和生活",
    "帮我想几个破冰游戏",
    "推荐几本教育学的书",
    "如何跟不交作业的学生谈话",
    "教师资格证面试一般考什么",
    "写一段新学期的开场白",
    "怎么在课堂上用好小组合作",
]
NONE_GENERIC_EN = [
    "How do I keep students focused after lunch?",
    "Suggest some icebreaker games for a new class",
    "Any tips for talking with a student who skips homework?",
]


@dataclass
class Run:
    rid: int
    thread: int
    text: str  # the recall entry text: request, then the head of the answer


@dataclass
class Question:
    qid: int
    scope: int
    kind: str  # paraphrase | vague | none
    message: str
    turns: list[tuple[str, str]]  # earlier turns of its own thread (user, assistant)
    relevant: frozenset[int]


@dataclass
class Scope:
    sid: int
    subject: str
    english: bool
    grade: str
    classes: list[str]
    runs: list[Run] = field(default_factory=list)


@dataclass
class TeacherSet:
    scopes: list[Scope]
    questions: list[Question]
    other: dict[int, int]  # question id -> the other teacher's scope it is asked against


def _answer(rng: random.Random, kind: str, topic: str, terms: list[str], cls: str) -> str:
    t = rng.sample(terms, k=min(3, len(terms)))
    heads = {
        "exam": [
            f"好的，以下是{cls}《{topic}》{rng.choice(KIND_WORDS['exam'])}（满分100分，"
            f"时间45分钟）。一、选择题 1. 关于{t[0]}，下列说法正确的是（ ）……"
            f"二、填空题 {t[1]}……三、解答题 结合{t[2]}说明……",
            f"{topic}测试卷 班级：{cls} 姓名：____ 一、判断题：{t[0]}……二、简答题："
            f"请解释{t[1]}与{t[2]}的关系……",
        ],
        "lesson": [
            f"《{topic}》教学设计 教学目标：理解{t[0]}，掌握{t[1]}。教学重难点：{t[2]}。"
            f"教学过程：一、情境导入……二、新知探究……",
            f"课题：{topic} 学情分析：{cls}学生已初步了解{t[0]}。环节一：导入（5分钟）"
            f"环节二：围绕{t[1]}展开探究……",
        ],
        "homework": [
            f"{topic}课后作业（基础+提高）：1. {t[0]}相关练习……2. {t[1]}……"
            f"3. 选做：{t[2]}拓展……预计用时20分钟",
        ],
        "correction": [
            f"批改意见：整体完成较好。常见问题：{t[0]}理解不到位；{t[1]}步骤不完整。"
            f"建议讲评时重点回顾{t[2]}……",
            f"错题分析（{topic}）：错误率最高的是{t[0]}，原因是……订正要求：……",
        ],
        "activity": [
            f"活动名称：{topic}探究 活动目标：通过{t[0]}体验{t[1]}。准备材料：……"
            f"活动步骤：1. 分组 2. {t[2]}……",
        ],
        "rubric": [
            f"{topic}评分标准：A档（90分以上）：{t[0]}准确，{t[1]}完整；B档：……"
            f"C档：{t[2]}有明显错误……",
        ],
        "notice": [
            f"关于{topic}的通知 各位家长：您好！为做好{t[0]}工作，现将有关事项通知如下："
            f"一、{t[1]}……二、{t[2]}……",
        ],
        "letter": [
            f"亲爱的家长朋友们：您好！{topic}是孩子成长中的重要一环。最近我们注意到"
            f"{t[0]}方面……希望您在{t[1]}上多配合……",
        ],
        "meeting": [
            f"主题班会：{topic} 班会目标：……环节一：情景导入（{t[0]}）环节二：讨论"
            f"{t[1]}环节三：总结与承诺……",
        ],
        "comment": [
            f"期末评语（{cls}）：你在{t[0]}方面进步明显……希望在{t[1]}上继续努力……",
        ],
    }
    return rng.choice(heads[kind])


def _answer_en(rng: random.Random, kind: str, topic: str, terms: list[str], cls: str) -> str:
    t = rng.sample(terms, k=min(3, len(terms)))
    return rng.choice(
        [
            f"Here is a {rng.choice(KIND_EN[kind])} on {topic} for {cls}. Part A: {t[0]} ... "
            f"Part B: {t[1]} ... Part C: explain {t[2]} ...",
            f"{topic} — {rng.choice(KIND_EN[kind])}. Objectives: understand {t[0]} and "
            f"{t[1]}. Steps: warm-up, practice on {t[2]}, wrap-up.",
        ]
    )


def _fill(template: str, **slots: object) -> str:
    return template.format(**slots)


def _make_scope(rng: random.Random, sid: int) -> tuple[Scope, dict[str, list[str]]]:
    english = sid % 9 == 4  # four of 36 teachers write in English
    # Subjects in turn (every subject two or three times), a level that teaches it.
    subject = "英语" if english else sorted(TOPICS)[sid % len(TOPICS)]
    levels = ["junior", "senior"] + (["primary"] if subject in PRIMARY_SUBJECTS else [])
    level = "primary" if subject == "科学" else rng.choice(levels)
    grade = rng.choice(GRADES[level])
    n_classes = rng.randint(1, 3)
    numbers = rng.sample(range(1, 13), n_classes)
    if english:
        classes = [f"Grade {rng.randint(3, 11)} Class {n}" for n in numbers]
    else:
        classes = [f"{grade}（{n}）班" for n in numbers]
    scope = Scope(sid=sid, subject=subject, english=english, grade=grade, classes=classes)
    # The topics this teacher works on: most of the subject, a few left untouched.
    topics = list(TOPICS[subject])
    rng.shuffle(topics)
    n_worked = max(3, len(topics) - rng.randint(2, 4))
    worked = {t: TOPICS[subject][t] for t in topics[:n_worked]}
    return scope, worked


def generate(seed: int = SEED, n_scopes: int = N_SCOPES) -> TeacherSet:
    rng = random.Random(seed)
    scopes: list[Scope] = []
    questions: list[Question] = []
    other: dict[int, int] = {}
    rid = 0
    thread_no = 0
    untouched: dict[int, list[tuple[str, list[str]]]] = {}
    # (scope, thread) -> (kind, topic, key terms, class, run ids)
    threads: dict[tuple[int, int], tuple[str, str, list[str], str, list[int]]] = {}
    for sid in range(n_scopes):
        scope, worked = _make_scope(rng, sid)
        school_topics = rng.sample(sorted(SCHOOL), k=rng.randint(5, 9))
        untouched[sid] = [(t, v) for t, v in TOPICS[scope.subject].items() if t not in worked]
        untouched[sid] += [(t, SCHOOL[t]) for t in SCHOOL if t not in school_topics]
        # Most teachers have used the product for a while; one in four is new to it (a
        # small memory, where one shared word must not be enough).
        target_runs = rng.randint(8, 40) if sid % 4 == 1 else rng.randint(200, 300)
        while len(scope.runs) < target_runs:
            thread_no += 1
            if rng.random() < 0.7:
                topic = rng.choice(sorted(worked))
                key = worked[topic]
                kind = rng.choice(SUBJECT_KINDS)
                templates = NEW_EN if scope.english else NEW_REQUEST
            else:
                topic = rng.choice(school_topics)
                key = SCHOOL[topic]
                kind = rng.choice(SCHOOL_KINDS)
                templates = NEW_EN if scope.english else NEW_SCHOOL
            cls = rng.choice(scope.classes)
            k1, k2 = rng.sample(key, 2)
            kind_word = rng.choice(KIND_EN[kind] if scope.english else KIND_WORDS[kind])
            request = _fill(
                rng.choice(templates),
                cls=cls,
                topic=topic,
                kind=kind_word,
                k1=k1,
                k2=k2,
                n=rng.choice([5, 8, 10, 12, 20]),
            )
            answer = (_answer_en if scope.english else _answer)(rng, kind, topic, key, cls)
            ids = []
            rid += 1
            scope.runs.append(Run(rid, thread_no, f"{request}\n→ {answer}"))
            ids.append(rid)
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 5])):
                follow = rng.choice(FOLLOW_UPS_EN if scope.english else FOLLOW_UPS)
                revised = (_answer_en if scope.english else _answer)(rng, kind, topic, key, cls)
                rid += 1
                scope.runs.append(Run(rid, thread_no, f"{follow}\n→ {revised}"))
                ids.append(rid)
            threads[(sid, thread_no)] = (kind, topic, key, cls, ids)
        scopes.append(scope)

    subjects = {s.sid: s.subject for s in scopes}
    topics_of: dict[int, set[str]] = {}
    for (sid, _thread), value in threads.items():
        topics_of.setdefault(sid, set()).add(value[1])

    def another(sid: int, topic: str) -> int:
        """A teacher of another subject who never worked on ``topic`` (school matters
        are shared by all teachers: one who wrote the same notice holds a real match)."""
        pool = [
            s.sid
            for s in scopes
            if subjects[s.sid] != subjects[sid] and topic not in topics_of[s.sid]
        ]
        return rng.choice(pool or [s.sid for s in scopes if s.sid != sid])

    qid = 0
    for scope in scopes:
        own = [(t, v) for (s, t), v in threads.items() if s == scope.sid]
        by_topic: dict[str, list[tuple[int, tuple[str, str, list[str], str, list[int]]]]] = {}
        for thread, value in own:
            by_topic.setdefault(value[1], []).append((thread, value))
        kinds_en = KIND_EN
        for _ in range(10):  # paraphrase
            thread, (kind, topic, key, cls, _ids) = rng.choice(own)
            k1, k2 = rng.sample(key, 2)
            templates = PARAPHRASE_EN if scope.english else PARAPHRASE
            words = kinds_en[kind] if scope.english else KIND_WORDS[kind]
            message = _fill(
                rng.choice(templates),
                cls=cls,
                k1=k1,
                k2=k2,
                kind=rng.choice(words),
                kind2=rng.choice(words),
            )
            relevant = _same_work(by_topic[topic], kind)
            questions.append(Question(qid, scope.sid, "paraphrase", message, [], relevant))
            other[qid] = another(scope.sid, topic)
            qid += 1
        for _ in range(10):  # vague follow-up in a thread about the topic
            topic = rng.choice(sorted(by_topic))
            kinds_done = sorted({v[0] for _, v in by_topic[topic]})
            kind = rng.choice(kinds_done)
            _thread, (_k, _t, key, cls, _ids) = rng.choice(
                [tv for tv in by_topic[topic] if tv[1][0] == kind]
            )
            turns = _context_turns(rng, scope, topic, key, cls, avoid=kind)
            words = kinds_en[kind] if scope.english else KIND_WORDS[kind]
            message = rng.choice(VAGUE_EN if scope.english else VAGUE).format(
                kind=rng.choice(words)
            )
            relevant = _same_work(by_topic[topic], kind)
            questions.append(Question(qid, scope.sid, "vague", message, turns, relevant))
            other[qid] = another(scope.sid, topic)
            qid += 1
        for i in range(8):  # no relevant past run
            if i < 5 and untouched[scope.sid]:
                topic, key = rng.choice(untouched[scope.sid])
                kind = rng.choice(SUBJECT_KINDS if topic in TOPICS[scope.subject] else SCHOOL_KINDS)
                k1, k2 = rng.sample(key, 2)
                words = kinds_en[kind] if scope.english else KIND_WORDS[kind]
                template = rng.choice(
                    NEW_EN
                    if scope.english
                    else (NEW_REQUEST if kind in SUBJECT_KINDS else NEW_SCHOOL)
                )
                message = _fill(
                    template,
                    cls=rng.choice(scope.classes),
                    topic=topic,
                    kind=rng.choice(words),
                    k1=k1,
                    k2=k2,
                    n=10,
                )
                turns = []
                if i % 2:
                    turns = _context_turns(rng, scope, topic, key, rng.choice(scope.classes), "")
                    message = rng.choice(VAGUE_EN if scope.english else VAGUE).format(
                        kind=rng.choice(words)
                    )
            else:
                message = rng.choice(NONE_GENERIC_EN if scope.english else NONE_GENERIC)
                turns = []
            questions.append(Question(qid, scope.sid, "none", message, turns, frozenset()))
            qid += 1
    return TeacherSet(scopes, questions, other)


def _same_work(
    threads: list[tuple[int, tuple[str, str, list[str], str, list[int]]]], kind: str
) -> frozenset[int]:
    """Every run of the threads of that kind on that topic."""
    return frozenset(r for _, (k, _t, _key, _c, ids) in threads if k == kind for r in ids)


def _context_turns(
    rng: random.Random, scope: Scope, topic: str, key: list[str], cls: str, avoid: str
) -> list[tuple[str, str]]:
    """One or two earlier turns of the current thread: talk about the topic (not the
    kind of work the follow-up will ask for)."""
    kinds = [k for k in (SUBJECT_KINDS if topic not in SCHOOL else SCHOOL_KINDS) if k != avoid]
    turns: list[tuple[str, str]] = []
    for _ in range(rng.choice([1, 1, 2])):
        kind = rng.choice(kinds)
        k1, k2 = rng.sample(key, 2)
        if scope.english:
            user = rng.choice(
                [
                    f"My {cls} students keep confusing {k1} and {k2}. How should I explain it?",
                    f"Give me a {rng.choice(KIND_EN[kind])} idea on {topic}",
                ]
            )
            answer = _answer_en(rng, kind, topic, key, cls)
        else:
            user = rng.choice(
                [
                    f"{cls}的学生总是把{k1}和{k2}搞混，怎么讲比较好？",
                    f"讲{topic}的时候怎么引入{k1}比较自然",
                    f"帮我想一个{topic}的{rng.choice(KIND_WORDS[kind])}",
                    f"关于{k1}，有没有生活中的例子",
                ]
            )
            answer = _answer(rng, kind, topic, key, cls)
        turns.append((user, answer))
    return turns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats", action="store_true")
    parser.add_argument("--dump", type=int, help="print one scope's runs and questions")
    args = parser.parse_args()
    data = generate()
    if args.stats or args.dump is None:
        runs = [len(s.runs) for s in data.scopes]
        kinds: dict[str, int] = {}
        for q in data.questions:
            kinds[q.kind] = kinds.get(q.kind, 0) + 1
        print(
            f"{len(data.scopes)} scopes, runs per scope {min(runs)}-{max(runs)} "
            f"(total {sum(runs)}), questions {kinds}"
        )
        subjects: dict[str, int] = {}
        for s in data.scopes:
            subjects[s.subject] = subjects.get(s.subject, 0) + 1
        print("subjects:", subjects)
    if args.dump is not None:
        scope = data.scopes[args.dump]
        print(scope.subject, scope.grade, scope.classes)
        for run in scope.runs[:40]:
            print(f"[{run.rid} t{run.thread}] {run.text[:120]}")
        for q in data.questions:
            if q.scope == args.dump:
                print(q.kind, q.turns, "->", q.message, sorted(q.relevant)[:5])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
