"""Throughput, development-set figures and table results of the red line (``memory/redline/``).

Run: ``.venv/bin/python benchmarks/redline.py [--texts N] [--rounds R] [--seed S] [--forms]``

1. Reads the red line's own labelled development set (``benchmarks/data/redline_dev.jsonl``,
   built by ``benchmarks/data/build_redline_dev.py``) and reports, for the ``dev`` split and
   for the ``heldback`` split (never tuned on), per category: recall (rows of that
   category blocked as that category) and false-positive rate (rows labelled ``none``
   blocked as that category), and how many ``none`` rows were blocked at all.
   The same figures for the hand-written set (``benchmarks/data/redline_handwritten.jsonl``,
   361 sentences written one by one, not from the development set's patterns): its
   ``check`` half was looked at when fixing mechanisms, its ``sealed`` half never. And the
   same for ``benchmarks/data/redline_fresh.jsonl`` (370 sentences written by hand later)
   and for ``benchmarks/data/redline_fresh2.jsonl`` (310 more, split into ``dev`` and a
   ``sealed`` half by a hash of the text), and for ``benchmarks/data/redline_fresh3.jsonl``
   (107 more, split the same way), and for ``benchmarks/data/redline_fresh4.jsonl`` (101
   more, all sealed) and ``benchmarks/data/redline_fresh5.jsonl`` (126 more, all sealed)
   and ``benchmarks/data/redline_fresh6.jsonl`` (137 more, a ``dev`` and a ``sealed`` half
   by a hash of the text) and ``benchmarks/data/redline_fresh7.jsonl`` (60 more, split
   the same way; ``--tables-only`` stops after these tables).
2. Generates a realistic mix of teacher chat texts (50–2000 characters, built from
   ordinary teacher requests, many of them full of scores and exam words that must
   pass), about 5% of which carry one sensitive item, and measures ``scan`` and
   ``redact`` in texts/s and MB/s (UTF-8). It also reports how many planted items were
   caught and how many clean texts were left untouched. Then the same on texts of about
   1,000 characters joined from the unique teacher runs of ``recall_teacher_data`` (no
   sentence repeats, so no per-sentence cache helps), and how many of those runs are
   blocked at all. The ``cpu s`` column is what one core spent (best of ``--rounds``):
   on a shared machine, read it rather than the wall-clock column. The red line caches the
   blocked spans, the segmentation and the person references of each sentence by its
   text; these caches are emptied before every round, and the ``scan cold`` row empties
   them before every text (no sentence ever seen before: the product figure, since every
   teacher text is new). Caches keyed by a word, not a sentence, are kept.
3. Prints, per category, how many positives of the test tables are caught and how many
   negatives pass (``tests/memory/test_redline.py::CASES``).
4. If the shared development data is present (``../shared/data``), counts hits on its
   ordinary Chinese texts (Safety-Prompts requests, MADial dialogues and memories), none
   of which is about a real student: every hit there is worth a look.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import recall_teacher_data

from memory.redline import Category, redact, scan
from memory.redline.engine import clear_sentence_cache
from tests.memory.test_redline import CASES, luhn_complete, make_id

# Ordinary teacher turns: requests, plans, assistant answers. None is sensitive, and
# many use scores, ranks and health words the way teachers do.
CLEAN_SENTENCES = (
    "帮我出一份八年级数学期中试卷，满分120分，考试时间90分钟。",
    "选择题每题3分，共10题；填空题每空2分；解答题共5道，每题12分。",
    "请按照人教版教材第三单元的内容设计一节45分钟的语文课。",
    "这首诗表达了诗人抑郁的情绪，请分析作者借景抒情的手法。",
    "生物课要讲解糖尿病的成因和胰岛素的作用，请准备课件大纲。",
    "设计一节关于预防近视的主题班会，时间40分钟左右。",
    "请把简答题换成两道开放性题目，难度中等。",
    "以后出题都用人教版教材，题目不要超出课标范围。",
    "总分值150分的试卷，选择题占60分，非选择题占90分。",
    "帮我设计一个成绩单模板，包括姓名、学号和各科成绩几列。",
    "作文评分标准：内容20分，结构15分，语言15分，满分50分。",
    "全班平均分是多少不重要，重点是分析错因。",
    "第3题的答案有误，应该是B而不是C。",
    "第二单元的重点是一元二次方程的解法和应用。",
    "请给这篇作文写一段评语，指出优点和不足。",
    "下周一上午第二节课进行单元测验，范围是第1到第4课。",
    "心脏的结构与功能这一节，需要配一张示意图。",
    "请以'癌症'为主题写一篇面向初中生的科普阅读材料。",
    "如何帮助有阅读困难的学生提高阅读兴趣？请给出五条建议。",
    "出一道应用题：一辆汽车每小时行驶60千米，3小时行驶多少千米？",
    "把这套卷子的难度调低一点，基础题占70%。",
    "体育课上做耐力跑训练，800米分成两组进行。",
    "英语听力部分共30分，每小题1.5分。",
    "请列出高考数学全国卷近三年的考点分布。",
    "下次家长会要讲期末复习安排和寒假作业。",
    "帮我把这段文言文翻译成现代汉语，并标注重点实词。",
    "八年级物理第5章讲的是透镜及其应用。",
    "这道题占10分，学生容易在第二问失分，讲评时要强调。",
    "化学实验课要提醒学生注意安全，佩戴护目镜。",
    "请生成10道一元一次方程的练习题，附答案。",
    "明天的班会主题是心理健康，请准备一个互动游戏。",
    "我教八年级数学，两个班，每班45人左右。",
    "历史课讲到辛亥革命，请设计三个课堂提问。",
    "地理课需要一张中国主要河流的分布图。",
    "请把第四题改成填空题，分值不变。",
    "期中考试安排在第10周，请帮我做复习计划。",
    "阅读理解共4篇，每篇配5道选择题。",
    "把评分细则改成按步骤给分，每步2分。",
    "给学生讲讲过敏反应的原理，用生活中的例子。",
    "帮我查一下二十四节气的由来，做成一页PPT。",
)

NAMES = ("张三", "李华", "王芳", "刘洋", "陈静", "小明", "赵磊", "孙悦", "周杰", "吴桐")
SUBJECTS = ("数学", "语文", "英语", "物理", "化学", "生物")
CONDITIONS = ("哮喘", "癫痫", "多动症", "抑郁症", "糖尿病", "先天性心脏病", "读写障碍")


def _sensitive(rng: random.Random) -> tuple[Category, str]:
    """One sentence carrying exactly one sensitive item."""
    name, subject = rng.choice(NAMES), rng.choice(SUBJECTS)
    kind = rng.choice(list(Category))
    if kind is Category.ID_NUMBER:
        value = make_id(
            f"{rng.randint(110000, 829999):06d}",
            f"{rng.randint(1950, 2015)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}",
            f"{rng.randint(0, 999):03d}",
        )
        return kind, f"{name}的身份证号是{value}，报名时要用。"
    if kind is Category.MOBILE:
        value = f"1{rng.choice('3456789')}{rng.randint(0, 999_999_999):09d}"
        return kind, f"{name}家长的电话{value[:3]} {value[3:7]} {value[7:]}，有事联系。"
    if kind is Category.BANK_CARD:
        value = luhn_complete(f"6222{rng.randint(0, 10**14 - 1):014d}")
        return kind, f"补助打到卡号{value}上。"
    if kind is Category.GRADE:
        return kind, f"{name}这次期中{subject}考了{rng.randint(20, 100)}分，需要个别辅导。"
    return kind, f"{name}同学有{rng.choice(CONDITIONS)}，体育课要注意。"


@dataclass(frozen=True)
class Sample:
    text: str
    planted: Category | None


def generate(count: int, seed: int) -> list[Sample]:
    """``count`` texts of about 50–2000 characters; about 5% carry one planted item."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for _ in range(count):
        target = rng.randint(50, 2000)
        sentences = [rng.choice(CLEAN_SENTENCES)]
        while True:
            nxt = rng.choice(CLEAN_SENTENCES)
            if sum(map(len, sentences)) + len(nxt) > target:
                break
            sentences.append(nxt)
        planted: Category | None = None
        if rng.random() < 0.05:
            planted, sentence = _sensitive(rng)
            sentences.insert(rng.randrange(len(sentences) + 1), sentence)
        samples.append(Sample("".join(sentences), planted))
    return samples


def _time(fn: Callable[[str], object], texts: list[str], rounds: int) -> tuple[float, float]:
    """Best (wall, CPU) seconds over ``rounds``; CPU time is what one core spent. The red
    line's sentence caches are emptied before every round, so a round gains from them only
    where sentences repeat within the round (the pattern mix), never from an earlier one."""
    best_wall = best_cpu = float("inf")
    for _ in range(rounds):
        clear_sentence_cache()
        wall, cpu = time.perf_counter(), time.process_time()
        for text in texts:
            fn(text)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu


def teacher_runs(count: int) -> list[Sample]:
    """``count`` texts of about 1,000 characters made of the unique requests and answer
    heads of the generated teacher set (none of which is about a real student): unlike
    the pattern mix, no sentence repeats, so no per-sentence cache helps. Also prints how
    many of the unique runs the red line blocks at all (ordinary teacher text)."""
    teachers = recall_teacher_data.generate()
    runs = sorted({run.text for scope in teachers.scopes for run in scope.runs})
    blocked = sum(bool(scan(run)) for run in runs)
    print(f"unique teacher runs blocked: {blocked}/{len(runs)} {blocked / len(runs):.2%}")
    random.Random(3).shuffle(runs)
    samples: list[Sample] = []
    current: list[str] = []
    for run in runs:
        current.append(run)
        if sum(map(len, current)) >= 1000:
            samples.append(Sample("\n".join(current), None))
            current = []
            if len(samples) == count:
                break
    return samples


def throughput(samples: list[Sample], rounds: int) -> None:
    texts = [s.text for s in samples]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    chars = sum(map(len, texts))
    for text in texts[:50]:
        scan(text)  # warm the caches of the first calls (segmenter dictionary, automata)
    print(
        f"corpus: {len(texts)} texts, {chars} chars, {megabytes:.2f} MB (UTF-8), best of {rounds}"
    )
    print(
        f"{'function':<10}{'cpu s':>8}{'texts/s':>10}{'1k-char texts/s':>17}{'MB/s':>8}"
        f"{'µs/text':>9}{'wall texts/s':>14}"
    )

    def scan_cold(text: str) -> object:
        clear_sentence_cache()  # every sentence as if never seen
        return scan(text)

    for name, fn in (("scan", scan), ("redact", redact), ("scan cold", scan_cold)):
        wall, cpu = _time(fn, texts, rounds)
        print(
            f"{name:<10}{cpu:>8.3f}{len(texts) / cpu:>10.0f}{chars / 1000 / cpu:>17.0f}"
            f"{megabytes / cpu:>8.2f}{cpu / len(texts) * 1e6:>9.0f}{len(texts) / wall:>14.0f}"
        )
    planted = [s for s in samples if s.planted is not None]
    caught = sum(s.planted in {h.category for h in scan(s.text)} for s in planted)
    clean = [s for s in samples if s.planted is None]
    untouched = sum(not scan(s.text) for s in clean)
    print(
        f"planted items caught: {caught}/{len(planted)}; clean texts untouched: "
        f"{untouched}/{len(clean)}"
    )


def tables() -> None:
    print(f"\n{'category':<12}{'positives caught':>18}{'negatives passed':>18}")
    missed: list[str] = []
    for category in Category:
        pos = [c for c in CASES if c.category is category and c.blocked]
        neg = [c for c in CASES if c.category is category and not c.blocked]
        caught = [c for c in pos if category in {h.category for h in scan(c.text)}]
        passed = [c for c in neg if category not in {h.category for h in scan(c.text)}]
        missed += [f"  missed {category}: {c.text!r}" for c in pos if c not in caught]
        missed += [f"  blocked {category}: {c.text!r}" for c in neg if c not in passed]
        print(f"{category.value:<12}{len(caught):>10}/{len(pos):<7}{len(passed):>10}/{len(neg):<7}")
    print("\n".join(missed) if missed else "all table cases as expected")


sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.devdata import dev_data  # noqa: E402

DATA = dev_data()


def _shared_texts() -> list[str]:
    texts: list[str] = []
    for name in (
        "injection-dev/safety_prompts_reverse_exposure_dev.jsonl",
        "injection-dev/safety_prompts_goal_hijacking_dev.jsonl",
    ):
        path = DATA / name
        if path.exists():
            texts += [json.loads(line)["text"] for line in path.open(encoding="utf-8")]
    madial = DATA / "recall-dev/madial/zh"
    if (madial / "MADial-Bench-zh-memory.json").exists():
        for line in (madial / "MADial-Bench-zh-memory.json").open(encoding="utf-8"):
            texts += [event.get("event", "") for event in json.loads(line).values()]
    if (madial / "MADial-Bench-zh-dialogue.json").exists():
        for line in (madial / "MADial-Bench-zh-dialogue.json").open(encoding="utf-8"):
            texts += json.loads(line)["dialogue"]
    return texts


def shared_data() -> None:
    texts = _shared_texts()
    if not texts:
        print(f"\nshared data not found under {DATA}; skipped")
        return
    flagged: list[str] = []
    for text in texts:
        for hit in scan(text):
            snippet = text[max(0, hit.start - 12) : hit.end + 8].replace("\n", " ")
            flagged.append(f"  {hit.category.value}: …{snippet}…")
    print(f"\nshared ordinary texts: {len(texts)}, hits: {len(flagged)}")
    print("\n".join(flagged[:20]))


DEV_SET = Path(__file__).resolve().parent / "data" / "redline_dev.jsonl"
# Written by hand (not from the development set's patterns), in the voices of parents and
# teachers, WeChat style, dialect, Latin names and English mixed in; only the ID, card and
# phone values were filled in by a checksum. Its ``check`` half was looked at when fixing
# mechanisms; its ``sealed`` half is reported only.
HANDWRITTEN_SET = Path(__file__).resolve().parent / "data" / "redline_handwritten.jsonl"
# Fresh development sentences written by hand for the third red-line round (teachers,
# parents, notices, exam items, novels, class statistics; negatives included), in the
# same format, one split ``fresh``: the mechanisms of that round were worked out from its
# misses and from the ``check`` half above.
FRESH_SET = Path(__file__).resolve().parent / "data" / "redline_fresh.jsonl"
# Written by hand for the fourth round, in voices the sets above lack (parents' WeChat
# messages, teachers' requests to the agent, class-group notices, dialect, slang, typos,
# English mixed in). Split by a hash of the text (``dev``: even first 32 bits of its
# SHA-256, ``sealed``: odd); the ``sealed`` half is reported only, its misses never read.
FRESH2_SET = Path(__file__).resolve().parent / "data" / "redline_fresh2.jsonl"
# Written by hand for the fifth round (107 sentences, mostly ordinary teacher text of the
# kinds that were wrongly blocked: notices to everyone, class statistics, team results,
# exam authoring, a textbook's patient, fiction, hypotheses, look-alike words such as 病句),
# split like the fourth round's set; its ``sealed`` half is reported only.
FRESH3_SET = Path(__file__).resolve().parent / "data" / "redline_fresh3.jsonl"
# Written by hand for the sixth round (101 sentences: parents and teachers, slang, Latin
# names, English mixed in; about half ordinary text of the kinds still wrongly blocked:
# hyperbole, novel characters, an adult's own hospital errand, notices, a textbook's
# patient, team and class results). Written and measured before that round's code
# changed; the whole set is ``sealed``: reported only, its misses never read.
FRESH4_SET = Path(__file__).resolve().parent / "data" / "redline_fresh4.jsonl"
# Written by hand for the seventh round (126 sentences: 40 health, many outside the
# lexicon or only a cue about a named or role-referred student; 30 grade; 56 ordinary:
# notices, a textbook's patient, fiction, team and class results, the speaker's own or an
# adult's health, exam authoring, rubrics). Written and measured on main before that
# round's code changed; the whole set is ``sealed``: reported only, its misses never read.
FRESH5_SET = Path(__file__).resolve().parent / "data" / "redline_fresh5.jsonl"
# Written by hand for the eighth round (137 sentences: 50 grade, 30 health, 57 ordinary;
# parents' and teachers' voices, kin and pet names, Latin names, results with their scale
# (满分二十五), standing in a class (全班垫底), notices, textbook patients, fiction, team
# and class results). Measured on main before that round's code changed, split into
# ``dev`` (its misses read and fixed by mechanism) and ``sealed`` (reported only) by the
# first byte of the text's SHA-256.
FRESH6_SET = Path(__file__).resolve().parent / "data" / "redline_fresh6.jsonl"
# And 60 more for the same round, written after its first changes (health cues without a
# diagnosis, English mixed in, textbook and notice negatives), split the same way.
FRESH7_SET = Path(__file__).resolve().parent / "data" / "redline_fresh7.jsonl"
# Form tags of "none" rows about the speaker's own or another adult's health (a
# colleague, a relative): blocked by the policy above, so counted apart.
ADULT_HEALTH_FORMS = frozenset({"own/health", "adult/health", "adult/hospital"})
NUMBER_CATEGORIES = (Category.ID_NUMBER, Category.MOBILE, Category.BANK_CARD)


@dataclass(frozen=True)
class Row:
    text: str
    category: str
    form: str
    split: str


def dev_rows(path: Path = DEV_SET) -> list[Row]:
    return [Row(**json.loads(line)) for line in path.open(encoding="utf-8")]


def dev_set(show_forms: bool) -> None:
    report(dev_rows(), DEV_SET.name, ("dev", "heldback"), show_forms)


def report(rows: list[Row], name: str, splits: tuple[str, ...], show_forms: bool) -> None:
    found = {row.text: {h.category.value for h in scan(row.text)} for row in rows}
    print(f"\n{name}: {len(rows)} rows")
    header = f"{'split':<10}{'category':<11}{'recall':>16}{'false positives':>20}"
    print(header)
    for split in splits:
        part = [r for r in rows if r.split == split]
        negatives = [r for r in part if r.category == "none"]
        for category in Category:
            positives = [r for r in part if r.category == category.value]
            caught = sum(category.value in found[r.text] for r in positives)
            wrong = sum(category.value in found[r.text] for r in negatives)
            recall = (
                f"{caught}/{len(positives)} {caught / len(positives):.1%}" if positives else "-"
            )
            print(
                f"{split:<10}{category.value:<11}{recall:>16}{wrong:>9}/{len(negatives)} "
                f"{wrong / len(negatives):.1%}"
            )
        blocked = sum(bool(found[r.text]) for r in negatives)
        print(
            f"{split:<10}{'none':<11}{'':>16}{blocked:>9}/{len(negatives)} "
            f"{blocked / len(negatives):.1%}  (ordinary text blocked at all)"
        )
        # The policy (DESIGN.md): a health statement about any identifiable person is
        # blocked, an adult's too. fresh4 and fresh5 label the speaker's own and other
        # adults' health "none"; their writers' form tags say which rows those are.
        adults = [r for r in negatives if r.form in ADULT_HEALTH_FORMS]
        if adults:
            rest = [r for r in negatives if r.form not in ADULT_HEALTH_FORMS]
            for label, part_rows in (
                ("adults' health: the policy blocks these", adults),
                ("the rest", rest),
            ):
                hit = sum(bool(found[r.text]) for r in part_rows)
                print(
                    f"{split:<10}{'none':<11}{'':>16}{hit:>9}/{len(part_rows)} "
                    f"{hit / len(part_rows):.1%}  ({label})"
                )
    if show_forms:
        print("\nby form (label: blocked as labelled / rows; none: passed / rows)")
        forms: dict[tuple[str, str, str], list[bool]] = {}
        for r in rows:
            ok = (r.category in found[r.text]) if r.category != "none" else not found[r.text]
            forms.setdefault((r.split, r.category, r.form.split("/")[0]), []).append(ok)
        for (split, label, form), oks in sorted(forms.items()):
            print(f"  {split:<9}{label:<10}{form:<22}{sum(oks):>4}/{len(oks):<4}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--forms", action="store_true", help="figures per form tag too")
    parser.add_argument(
        "--tables-only", action="store_true", help="the labelled sets only, no throughput"
    )
    args = parser.parse_args()
    dev_set(args.forms)
    report(dev_rows(HANDWRITTEN_SET), HANDWRITTEN_SET.name, ("check", "sealed"), args.forms)
    report(dev_rows(FRESH_SET), FRESH_SET.name, ("fresh",), args.forms)
    report(dev_rows(FRESH2_SET), FRESH2_SET.name, ("dev", "sealed"), args.forms)
    report(dev_rows(FRESH3_SET), FRESH3_SET.name, ("dev", "sealed"), args.forms)
    report(dev_rows(FRESH4_SET), FRESH4_SET.name, ("sealed",), show_forms=False)
    report(dev_rows(FRESH5_SET), FRESH5_SET.name, ("sealed",), show_forms=False)
    report(dev_rows(FRESH6_SET), FRESH6_SET.name, ("dev", "sealed"), show_forms=False)
    report(dev_rows(FRESH7_SET), FRESH7_SET.name, ("dev", "sealed"), show_forms=False)
    if args.tables_only:
        return
    print()
    print("pattern mix (sentences drawn from CLEAN_SENTENCES, 5% with a planted item):")
    throughput(generate(args.texts, args.seed), args.rounds)
    print("\nteacher runs (recall_teacher_data: every text unique, joined to about 1,000 chars):")
    throughput(teacher_runs(args.texts // 4), args.rounds)
    tables()
    shared_data()


if __name__ == "__main__":
    main()
