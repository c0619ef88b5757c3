"""Speed of the recall index at 100k entries, side by side with bm25s and rank_bm25.

Run from the project root (about two minutes)::

    .venv/bin/python benchmarks/recall.py
    .venv/bin/python benchmarks/recall.py --docs 20000 --queries 300   # a quick look

One synthetic memory scope: ``--docs`` recall entries, each a teacher's request plus the
head of the assistant's answer, generated from templates and vocabularies with a fixed
seed (about 90 % Chinese, 10 % English). Every system gets the same corpus and the same
tokenisation (:func:`memory.recall.tokenize.terms`); queries are new teacher requests from
the same generator, given to every system as the same distinct terms.

Reported, for each system: build time, search latency p50/p95 (top 10) and the cost of
adding one entry to an index of ``--docs`` entries. bm25s and rank_bm25 have no
incremental add, so their per-entry update is a full rebuild. rank_bm25 scores every
document in Python for each query term, so it is timed on ``--rank-bm25-queries``
queries only (said so in the output). The database is not part of this benchmark.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.recall.gating import DEFAULT_THRESHOLD, GATE_LIMIT, gate
from memory.recall.index import RecallIndex
from memory.recall.query import QueryTerms, build_query
from memory.recall.tokenize import terms

# ------------------------------------------------------------------ synthetic corpus
SUBJECTS: dict[str, list[str]] = {
    "数学": [
        "二次函数",
        "三角函数",
        "概率统计",
        "立体几何",
        "数列求和",
        "导数应用",
        "平面向量",
        "不等式",
        "圆锥曲线",
        "复数运算",
        "集合与逻辑",
        "指数函数",
    ],
    "语文": [
        "古诗词鉴赏",
        "文言文阅读",
        "议论文写作",
        "记叙文阅读",
        "病句修改",
        "成语运用",
        "现代文阅读",
        "名著导读",
        "修辞手法",
        "散文赏析",
    ],
    "英语": [
        "定语从句",
        "一般过去时",
        "阅读理解",
        "完形填空",
        "书面表达",
        "虚拟语气",
        "被动语态",
        "非谓语动词",
        "听力训练",
        "词汇辨析",
    ],
    "物理": [
        "牛顿运动定律",
        "电磁感应",
        "光的折射",
        "动量守恒",
        "机械能守恒",
        "欧姆定律",
        "匀变速直线运动",
        "万有引力",
        "热力学定律",
        "电场强度",
    ],
    "化学": [
        "化学方程式",
        "氧化还原反应",
        "元素周期律",
        "化学平衡",
        "有机化合物",
        "离子反应",
        "物质的量",
        "电解质溶液",
        "金属的性质",
    ],
    "生物": [
        "细胞结构",
        "遗传规律",
        "光合作用",
        "生态系统",
        "基因表达",
        "细胞分裂",
        "神经调节",
        "免疫调节",
    ],
    "历史": [
        "辛亥革命",
        "工业革命",
        "丝绸之路",
        "改革开放",
        "秦朝统一",
        "文艺复兴",
        "第二次世界大战",
        "新文化运动",
    ],
    "地理": ["气候类型", "板块运动", "人口分布", "城市化", "水循环", "农业区位", "地形地貌"],
    "数据结构": [
        "二叉树",
        "链表",
        "排序算法",
        "栈和队列",
        "图的遍历",
        "哈希表",
        "堆排序",
        "最短路径",
        "动态规划",
        "平衡二叉树",
        "红黑树",
        "并查集",
    ],
    "操作系统": [
        "进程调度",
        "死锁",
        "虚拟内存",
        "文件系统",
        "页面置换算法",
        "信号量",
        "线程同步",
        "中断处理",
    ],
    "计算机网络": [
        "TCP三次握手",
        "IP地址划分",
        "HTTP协议",
        "路由算法",
        "网络安全",
        "DNS解析",
        "拥塞控制",
    ],
    "信息技术": [
        "Python循环",
        "Excel函数",
        "算法流程图",
        "网页制作",
        "数据库查询",
        "人工智能初步",
        "编程入门",
    ],
}
GRADES = [
    "一年级",
    "三年级",
    "五年级",
    "初一",
    "初二",
    "初三",
    "高一",
    "高二",
    "高三",
    "大一",
    "大二",
    "本科",
    "高职",
]
EXAMS = ["期中", "期末", "单元", "月考", "随堂", "模拟", "入学摸底"]
QTYPES = ["选择题", "填空题", "判断题", "简答题", "计算题", "应用题", "编程题", "论述题"]
REQUESTS = [
    "帮我出一份{grade}{subject}{exam}试卷，重点考{topic}，难度中等",
    "出{n}道关于{topic}的{qtype}，附答案和解析",
    "设计一节{grade}{subject}公开课教案，主题是{topic}，时长{m}分钟",
    "把上次{topic}试卷里的{qtype}换成{n}道{qtype2}",
    "请总结{topic}的核心知识点，做成复习提纲",
    "给{grade}学生写一份{topic}的学习任务单",
    "批改这篇关于{topic}的作文，指出优点和不足",
    "为{topic}设计{n}个课堂互动问题，适合{grade}",
    "生成{subject}{exam}考试的评分标准，满分{score}分",
    "根据{topic}出一套分层作业，基础题{n}道，提高题{n2}道",
    "写一封{exam}考试后的家长会通知，说明{subject}成绩分析安排",
    "制作{topic}的课件大纲，共{n}页，配{qtype}练习",
    "分析一下学生在{topic}上常见的错误和原因",
    "{topic}这部分怎么讲更容易让{grade}学生理解？给几个生活中的例子",
]
ANSWERS = [
    "好的，以下是{grade}{subject}{exam}试卷（满分{score}分，考试时间{m}分钟）。一、{qtype}"
    "（每题{p}分，共{q}分）1. 下列关于{topic}的说法中，正确的是（ ）A. {frag} B. {frag2}",
    "好的，下面是关于{topic}的{n}道{qtype}。第1题：{frag}。答案与解析：{frag2}，"
    "因此本题选C。第2题：结合{topic2}的知识，",
    "教学目标：1. 理解{topic}的基本概念；2. 能够运用{topic}解决实际问题；3. {frag}。"
    "教学重点：{topic}。教学难点：{frag2}。教学过程：一、导入（{p}分钟）",
    "已按要求替换：原第{p}题和第{q}题的{qtype}改为{qtype2}。新题目如下：{frag}；"
    "{frag2}。其余题目保持不变，总分仍为{score}分。",
    "{topic}复习提纲：一、基本概念：{frag}。二、重要结论：{frag2}。三、典型例题："
    "{topic2}与{topic}的综合运用。四、易错点提醒",
    "这篇作文的优点是：{frag}，结构清晰。不足之处：{frag2}。建议在{topic}方面多举例，"
    "结尾可以再升华主题。综合评分：{p}分（满分{score}分）。",
    "常见错误一：{frag}。原因是学生对{topic}的理解停留在表面。常见错误二：{frag2}。"
    "建议讲解时先复习{topic2}，再通过{n}道变式题巩固。",
]
FRAGMENTS = [
    "概念理解不清导致混淆",
    "计算过程中符号出错",
    "忽略了题目中的限制条件",
    "需要画图辅助分析",
    "可以用类比的方法讲解",
    "注意区分相近的概念",
    "先求出关键量再代入",
    "建议分步骤书写过程",
    "联系生活实际更容易理解",
    "这一步是得分的关键",
    "时间复杂度为O(n log n)",
    "满足题设的条件",
    "答案不唯一，言之有理即可",
    "重点考查学生的综合运用能力",
    "适合小组合作探究",
    "课后布置{n}道巩固练习",
    "结合课本第{p}页的例题",
    "利用表格整理对比",
    "学生容易把两个公式记反",
    "需要先判断再计算",
    "通过实验现象得出结论",
    "注意单位换算",
    "分类讨论是本题的关键",
    "可以用数形结合的思想",
    "逐段阅读并圈画关键词",
    "要求书写工整规范",
]

COMMON_WORDS = (
    "学生 老师 课堂 练习 作业 知识点 例题 解析 答案 难度 基础 提高 拓展 复习 预习 讲解 "
    "思路 方法 步骤 结论 定义 性质 定理 公式 证明 推导 图像 表格 实验 现象 原理 材料 "
    "段落 主旨 观点 论据 论证 结构 语言 表达 词语 句子 标点 书写 规范 审题 条件 问题 "
    "情境 生活 实际 应用 模型 变量 参数 函数 方程 数据 统计 图表 比较 分析 归纳 总结 "
    "判断 推理 计算 估算 验证 检查 反思 评价 反馈 分层 小组 合作 探究 讨论 展示 交流 "
    "任务 目标 重点 难点 导入 新授 巩固 小结 板书 课件 视频 图片 案例 素材 资源 时间 "
    "分钟 课时 单元 章节 教材 课本 第一 第二 第三 部分 环节 活动 设计 安排 建议 注意 "
    "提醒 要求 标准 评分 得分 满分 扣分 等级 优秀 良好 合格 进步 错误 原因 误区 易错 "
    "混淆 概念 理解 记忆 掌握 运用 迁移 综合 创新 能力 素养 习惯 兴趣 动机 信心 态度 "
    "情感 价值 思维 逻辑 批判 表述 阅读 写作 听力 口语 词汇 语法 时态 从句 短语 搭配 "
    "翻译 背诵 默写 朗读 诗歌 散文 小说 戏剧 人物 情节 环境 主题 手法 修辞 比喻 拟人 "
    "对比 象征 抒情 议论 说明 记叙 描写 细节 开头 结尾 过渡 照应 线索 层次 速度 加速度 "
    "位移 质量 能量 功率 压强 浮力 电流 电压 电阻 磁场 温度 溶液 浓度 反应 元素 分子 "
    "原子 离子 细胞 基因 蛋白质 生态 环境 种群 群落 气候 地形 河流 资源 人口 城市 交通 "
    "经济 政治 文化 社会 历史 朝代 改革 革命 战争 条约 制度 思想 科技 发明 文明 世界 "
    "中国 古代 近代 现代 当代 国家 民族 程序 代码 变量名 循环 条件语句 数组 指针 递归 "
    "复杂度 节点 边 顶点 路径 查找 插入 删除 遍历 排序 输入 输出 样例 测试 调试 接口 "
    "模块 系统 网络 协议 地址 端口 数据库 表格 字段 记录 查询 索引 安全 家长 班级 年级 "
    "学校 教研 备课 听课 评课 公开课 考试 测验 试卷 题目 选项 填空 判断 简答 解答 作文 "
    "家访 沟通 通知 会议 成绩 分析 报告 计划 总结 反思 心得 培训 比赛 竞赛 社团 实践 "
    "研学 劳动 体育 美术 音乐 健康 心理 安全教育 德育 班会 主题班会 值日 纪律 表扬 鼓励 "
    "批评 谈话 成长 发展 未来 一次函数 反比例函数 勾股定理 相似三角形 全等三角形 "
    "平行四边形 圆的性质 概率 统计图 方差 平均数 中位数 众数 分式 因式分解 一元二次方程 "
    "二元一次方程组 不等式组 数轴 绝对值 有理数 无理数 实数 "
)

EN_REQUESTS = [
    "Create a {n}-question quiz on {en_topic} for grade {g}, with answers",
    "Write a lesson plan about {en_topic} for a {m}-minute class",
    "Replace the short answer questions in the {en_topic} test with {n} multiple choice items",
    "Summarize the key points of {en_topic} as a revision sheet",
    "Give feedback on this essay about {en_topic}: structure, grammar and ideas",
]
EN_ANSWERS = [
    "Sure! Here is a {n}-question quiz on {en_topic}. 1. Which of the following statements "
    "about {en_topic} is correct? A) it always holds B) it depends on the context",
    "Lesson plan: {en_topic}. Objectives: students will be able to explain {en_topic} and "
    "apply it to new problems. Warm-up ({p} minutes): review {en_topic2}.",
    "Here are the revised items. The short answer questions were replaced by {n} multiple "
    "choice questions on {en_topic}; the total score stays at {score} points.",
]
EN_TOPICS = [
    "binary trees",
    "linked lists",
    "sorting algorithms",
    "photosynthesis",
    "the French Revolution",
    "quadratic equations",
    "Newton's laws",
    "poetry analysis",
    "the water cycle",
    "relative clauses",
    "probability",
    "cell division",
    "climate zones",
    "hash tables",
    "recursion",
    "electric circuits",
]


def _fill(template: str, rng: random.Random) -> str:
    subject = rng.choice(list(SUBJECTS))
    topics = SUBJECTS[subject]
    values = {
        "subject": subject,
        "topic": rng.choice(topics),
        "topic2": rng.choice(topics),
        "grade": rng.choice(GRADES),
        "exam": rng.choice(EXAMS),
        "qtype": rng.choice(QTYPES),
        "qtype2": rng.choice(QTYPES),
        "n": str(rng.randint(2, 20)),
        "n2": str(rng.randint(2, 10)),
        "m": str(rng.choice([40, 45, 90, 120])),
        "p": str(rng.randint(1, 30)),
        "q": str(rng.randint(10, 60)),
        "score": str(rng.choice([100, 120, 150])),
        "g": str(rng.randint(1, 12)),
        "en_topic": rng.choice(EN_TOPICS),
        "en_topic2": rng.choice(EN_TOPICS),
    }
    values["frag"] = rng.choice(FRAGMENTS).format(**values)
    values["frag2"] = rng.choice(FRAGMENTS).format(**values)
    return template.format(**values)


class _Zipf:
    """Words drawn with Zipf frequencies (exponent 1): the first word is the commonest."""

    def __init__(self, words: Sequence[str]) -> None:
        order = list(dict.fromkeys(words))
        self.words = order
        ranks = np.arange(1, len(order) + 1, dtype=np.float64)
        self.cum = np.cumsum(1.0 / ranks).tolist()

    def sample(self, rng: random.Random, n: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=n)


_VOCAB = _Zipf(
    COMMON_WORDS.split()
    + [t for topics in SUBJECTS.values() for t in topics]
    + [
        f"{t}的{a}"
        for topics in SUBJECTS.values()
        for t in topics
        for a in ("定义", "性质", "应用", "例题", "易错点", "证明", "图像", "实验")
    ],
)
_JOINERS = ("，", "的", "和", "与", "在", "中", "；", "是", "对", "把", "要", "。")


def _body(rng: random.Random, n_words: int) -> str:
    """Answer text: Zipf-sampled content words glued by common particles."""
    words = _VOCAB.sample(rng, n_words)
    parts: list[str] = []
    for word in words:
        parts.append(word)
        if rng.random() < 0.6:
            parts.append(rng.choice(_JOINERS))
    return "".join(parts)


def make_entry(rng: random.Random) -> str:
    """One recall entry: request + head of the answer (about 10 % in English)."""
    if rng.random() < 0.1:
        return _fill(rng.choice(EN_REQUESTS), rng) + "\n" + _fill(rng.choice(EN_ANSWERS), rng)
    head = _fill(rng.choice(ANSWERS), rng)
    return _fill(rng.choice(REQUESTS), rng) + "\n" + head + _body(rng, rng.randint(8, 30))


def make_query(rng: random.Random) -> str:
    """A new teacher request (the current input of a run)."""
    if rng.random() < 0.1:
        return _fill(rng.choice(EN_REQUESTS), rng)
    return _fill(rng.choice(REQUESTS), rng)


# ------------------------------------------------------------------ query cuts
def cut_query(
    index: RecallIndex,
    query: Mapping[str, float],
    *,
    max_terms: int | None = None,
    drop_unseen: bool = False,
) -> QueryTerms:
    """``query`` cut before the search, for measuring cuts the product does not make.

    ``max_terms`` keeps only that many of the terms the scope knows, those with the
    largest weight x IDF (ties: the query's order); terms the scope has never seen stay
    (they cost nothing at search time and count in the gate's evidence).
    ``drop_unseen`` removes the terms the scope has never seen. The names stay.
    """
    df = {term: index.document_frequency(term) for term in query}
    kept = {t: w for t, w in query.items() if df[t] > 0 or not drop_unseen}
    if max_terms is not None:
        seen = [t for t in kept if df[t] > 0]
        if len(seen) > max_terms:
            idfs = index.idf([df[t] for t in seen]).tolist()
            masses = [kept[t] * idf for t, idf in zip(seen, idfs, strict=True)]
            order = sorted(range(len(seen)), key=lambda i: -masses[i])  # stable on ties
            dropped = {seen[i] for i in order[max_terms:]}
            kept = {t: w for t, w in kept.items() if t not in dropped}
    return QueryTerms(kept, getattr(query, "names", frozenset()))


# --------------------------------------------------------------------------- timing
class Latency:
    """Per-call wall-clock and CPU (this process) times, in seconds.

    The CPU time is what the call itself costs; the wall time adds whatever else the
    machine was doing (other processes on a shared machine inflate its tail).
    """

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, fn: Callable[[int], object], n: int) -> Latency:
        for i in range(n):
            wall, cpu = time.perf_counter(), time.process_time()
            fn(i)
            self.cpu.append(time.process_time() - cpu)
            self.wall.append(time.perf_counter() - wall)
        return self

    def ms(self, which: str = "wall") -> str:
        values = np.asarray(self.wall if which == "wall" else self.cpu) * 1e3
        p50, p95 = np.percentile(values, [50, 95])
        return f"{p50:.2f} / {p95:.2f}"

    def p95_ms(self, which: str = "wall") -> float:
        values = np.asarray(self.wall if which == "wall" else self.cpu) * 1e3
        return float(np.percentile(values, 95))

    def us(self) -> str:
        values = np.asarray(self.wall) * 1e6
        p50, p95 = np.percentile(values, [50, 95])
        return f"{p50:.0f} / {p95:.0f} µs"


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


Row = tuple[str, str, str, str, str]


def bench_ours(
    corpus: list[list[str]],
    queries: Sequence[Mapping[str, float]],
    extra: list[list[str]],
) -> tuple[Row, Latency, str]:
    build, index = _timed(lambda: RecallIndex.from_documents(enumerate(corpus)))
    assert isinstance(index, RecallIndex)
    index.search(queries[0], k=10)  # warms the length-normaliser cache
    latency = Latency().run(lambda i: index.search(queries[i], k=10), len(queries))
    fired = sum(bool(gate(index.search(q, k=GATE_LIMIT))) for q in queries)
    n_docs = len(corpus)
    adds = Latency().run(lambda i: index.add(n_docs + i, extra[i]), len(extra))

    # The production pattern: one add (a run ends), then one search (the next run starts).
    def add_then_search(i: int) -> object:
        index.add(2 * n_docs + i, extra[i])
        return index.search(queries[i], k=10)

    mixed = Latency().run(add_then_search, min(len(extra), len(queries)))
    row = (
        "ours (RecallIndex)",
        f"{build:.1f} s",
        f"{latency.ms()}  (cpu {latency.ms('cpu')})",
        f"{adds.us()} (incremental)",
        f"add+search: {mixed.ms()}",
    )
    note = (
        f"ours: {index.nbytes() / 1e6:.0f} MB of arrays; the gate (top {GATE_LIMIT}, score >= "
        f"{DEFAULT_THRESHOLD}) fired on {fired}/{len(queries)} queries"
    )
    return row, latency, note


def bench_bm25s(
    corpus: list[list[str]], queries: list[list[str]], extra: list[list[str]]
) -> tuple[Row, Latency]:
    import bm25s

    def build(docs: list[list[str]]) -> bm25s.BM25:
        model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        model.index(docs, show_progress=False)
        return model

    build_s, model = _timed(lambda: build(corpus))
    assert isinstance(model, bm25s.BM25)

    def search(i: int) -> object:
        return model.retrieve(
            [queries[i]], k=10, show_progress=False, n_threads=1, backend_selection="numpy"
        )

    search(0)
    latency = Latency().run(search, len(queries))
    rebuild_s, _ = _timed(lambda: build([*corpus, extra[0]]))
    row = (
        "bm25s (lucene, numpy)",
        f"{build_s:.1f} s",
        f"{latency.ms()}  (cpu {latency.ms('cpu')})",
        f"{rebuild_s:.1f} s (no incremental add: full re-index)",
        "",
    )
    return row, latency


def bench_rank_bm25(corpus: list[list[str]], queries: list[list[str]]) -> Row:
    from rank_bm25 import BM25Okapi

    build_s, model = _timed(lambda: BM25Okapi(corpus, k1=1.2, b=0.75))
    assert isinstance(model, BM25Okapi)

    def search(i: int) -> object:
        scores = model.get_scores(queries[i])
        return np.argpartition(scores, len(scores) - 10)[-10:]

    latency = Latency().run(search, len(queries))
    return (
        "rank_bm25 (BM25Okapi)",
        f"{build_s:.1f} s",
        f"{latency.ms()}  ({len(queries)} queries only: slow)",
        f"{build_s:.1f} s (no incremental add: full rebuild)",
        "",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--rank-bm25-queries", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20260612)
    parser.add_argument("--skip-rank-bm25", action="store_true")
    parser.add_argument(
        "--max-terms",
        type=int,
        help="cut each query to its N known terms of largest weight x IDF (a measurement: "
        "the product does not cut so; see recall_eval.py --query-cuts)",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    started = time.perf_counter()

    gen_s, texts = _timed(lambda: [make_entry(rng) for _ in range(args.docs)])
    assert isinstance(texts, list)
    tok_s, corpus = _timed(lambda: [terms(text) for text in texts])
    assert isinstance(corpus, list)
    lengths = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
    print(
        f"corpus: {args.docs} entries, {lengths.mean():.0f} terms per entry "
        f"(p5 {np.percentile(lengths, 5):.0f}, p95 {np.percentile(lengths, 95):.0f}), "
        f"{len({t for doc in corpus for t in doc})} distinct terms; generated in {gen_s:.1f} s, "
        f"tokenised in {tok_s:.1f} s ({tok_s / args.docs * 1e6:.0f} µs per entry, "
        "done once per entry and stored)"
    )
    query_maps = [build_query(message=make_query(rng)) for _ in range(args.queries)]
    query_lists = [list(weights) for weights in query_maps]  # the same distinct terms
    extra = [terms(make_entry(rng)) for _ in range(args.adds)]
    print(
        f"queries: {args.queries} new teacher requests, "
        f"{np.mean([len(q) for q in query_lists]):.0f} distinct terms on average"
    )

    if args.max_terms is not None:
        scope = RecallIndex.from_documents(enumerate(corpus))
        query_maps = [cut_query(scope, q, max_terms=args.max_terms) for q in query_maps]
        query_lists = [list(weights) for weights in query_maps]
        print(
            f"queries cut to {args.max_terms} known terms: "
            f"{np.mean([len(q) for q in query_lists]):.0f} distinct terms on average"
        )
        del scope

    rows: list[Row] = []
    row, ours, note = bench_ours(corpus, query_maps, extra)
    rows.append(row)
    row, theirs = bench_bm25s(corpus, query_lists, extra)
    rows.append(row)
    if not args.skip_rank_bm25:
        rows.append(bench_rank_bm25(corpus, query_lists[: args.rank_bm25_queries]))

    print()
    header: Row = ("system", "build", "search top-10 p50 / p95 (ms)", "per-entry update", "")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print()
    print(note)
    print(
        f"ours / bm25s at p95: wall {ours.p95_ms() / theirs.p95_ms():.2f}x, "
        f"cpu {ours.p95_ms('cpu') / theirs.p95_ms('cpu'):.2f}x (target <= 2x); "
        f"ours p95 {ours.p95_ms():.2f} ms wall, {ours.p95_ms('cpu'):.2f} ms cpu (target <= 2 ms)"
    )
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
