"""The offline demo model: deterministic, no network, no key.

It exists so that the app runs and demos on a school server with no model configured,
and so that tests are reproducible. Its replies visibly use what they were given: a chat
reply quotes the injected memory sections it received, so a teacher sees memory working.
For memory jobs it summarises extractively (keeping one ``#run`` marker per folded run,
so tests can check that every run is folded exactly once, in order) and proposes facts
by rule. It is labelled as a demo wherever it shows.

It also shows the knowledge-base tool chain without a real model: offered a
``kb_search`` tool, it calls it when the teacher's request mentions 知识库 (the query is
the request without the words that only point at the knowledge base), and once the
tool's result is back it quotes the best result in its reply.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence

from agents.providers.base import (
    Completion,
    Delta,
    Message,
    Purpose,
    StreamEvent,
    ToolCall,
    ToolChoice,
    ToolSpec,
)
from agents.tokens import count_tokens, truncate_tokens

DEMO_BANNER = "【离线演示模型】"

# Section markers the read path renders (memory/boundary.py); matched loosely here so the
# demo keeps working if a header's wording changes.
_SECTION_RE = re.compile(
    r"^\[(核心记忆|本会话前情|相关历史|知识库检索结果)(?!结束)[^\]\n]*\]\s*$", re.M
)
_REQUEST_RE = re.compile(r"^\[用户问题\]\s*$", re.M)
_END_RE = re.compile(r"^\[(核心记忆|本会话前情|相关历史|知识库检索结果)结束[^\]\n]*\]\s*$", re.M)
_TURN_RE = re.compile(r"^‹(用户|助手)› ?(.*)$", re.M)

# The knowledge-base tool: its name, what triggers it, the words removed from the query,
# and the boundary lines of its result (matched loosely, like the sections above).
KB_TOOL = "kb_search"
_KB_MENTION_RE = re.compile(r"知识库")
_KB_POINTER_RE = re.compile(
    r"(?:请|帮我|麻烦)?(?:在|从|去|到|根据|按照|按|查|查查|查一下|搜|搜索|检索|看看)?"
    r"(?:一下)?(?:我的|我们的|学校的|本)?知识库(?:里面|里|中|内|上)?(?:的)?"
    r"(?:资料|内容|文档|材料)?(?:里|中)?(?:查|找|搜|看)?(?:一下|一找|看)?[，,：:、\s]*"
)
_KB_BOUNDARY_RE = re.compile(r"^\[知识库检索结果[^\]\n]*\]\s*$", re.M)

# Memory-job prompt markers (memory/prompts.py writes them).
RUN_MARKER_RE = re.compile(r"^【第\d+轮 #(\d+)】$", re.M)
_SUMMARY_OLD_RE = re.compile(r"【已有摘要】\n(.*?)\n【新增对话】", re.S)
_TEACHER_WORDS_RE = re.compile(r"【老师本轮原话】\n(.*?)\n【助手回复", re.S)

_FACT_TRIGGERS = re.compile(
    r"(我(?:是|教|在|们学校|们班|们年级|带|负责|习惯|喜欢|偏好|更喜欢|希望)|"
    r"以后|今后|每次|一律|一直|都用|都要|总是|请记住|记住)"
)


def _head(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


class OfflineClient:
    """Implements ``LLMClient`` without any I/O."""

    def __init__(
        self, *, name: str = "offline", stream_delay: float = 0.0, supports_tools: bool = True
    ) -> None:
        self.name = name
        self.stream_delay = stream_delay
        self.supports_tools = supports_tools

    # -- interface ------------------------------------------------------------------
    def complete(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Completion:
        input_tokens = sum(
            count_tokens(m.content) + sum(count_tokens(c.arguments) for c in m.tool_calls)
            for m in messages
        )
        call = None
        if purpose == "chat" and tool_choice == "auto":
            call = kb_tool_call(messages, tools)
        if call is not None:
            return Completion(
                text="",
                input_tokens=input_tokens,
                output_tokens=count_tokens(call.arguments),
                tool_calls=(call,),
                finish_reason="tool_calls",
            )
        text = self._respond(messages, purpose)
        return Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=count_tokens(text),
            finish_reason="stop",
        )

    def stream(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Iterator[StreamEvent]:
        completion = self.complete(messages, purpose=purpose, tools=tools, tool_choice=tool_choice)
        text = completion.text
        step = 12
        for start in range(0, len(text), step):
            if self.stream_delay and start:
                time.sleep(self.stream_delay)
            yield Delta(text[start : start + step])
        yield completion

    # -- behaviour -------------------------------------------------------------------
    def _respond(self, messages: list[Message], purpose: Purpose) -> str:
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if purpose == "compress":
            return summarise(user)
        if purpose == "extract":
            return propose_facts(user)
        return chat_reply(user, tool_results=_tool_results(messages))


def _tool_results(messages: list[Message]) -> list[str]:
    """The ``tool`` messages answering calls made after the teacher's last message."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    return [m.content for m in messages[last_user + 1 :] if m.role == "tool"]


def kb_tool_call(messages: list[Message], tools: Sequence[ToolSpec]) -> ToolCall | None:
    """The demo's ``kb_search`` call: when the tool is offered, the teacher's request
    mentions 知识库 and no tool has answered since that request."""
    if not any(tool.name == KB_TOOL for tool in tools) or _tool_results(messages):
        return None
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    _, request = _split_sections(user)
    if not _KB_MENTION_RE.search(request):
        return None
    query = " ".join(_KB_POINTER_RE.sub(" ", request).split()).strip("？?。！!，, ")
    arguments = json.dumps({"query": query or request.strip()}, ensure_ascii=False)
    calls = sum(len(m.tool_calls) for m in messages)
    return ToolCall(id=f"offline_call_{calls + 1}", name=KB_TOOL, arguments=arguments)


def kb_tool_quote(result: str, chars: int = 160) -> str:
    """The best result of a ``kb_search`` answer: its first lines inside the boundary
    (the tool renders hits best first)."""
    body = _KB_BOUNDARY_RE.sub("", result).strip().lstrip("-•* ")
    return _head(body, chars)


def _split_sections(user_message: str) -> tuple[dict[str, str], str]:
    """Injected sections by title, and the teacher's own request after them."""
    sections: dict[str, str] = {}
    matches = list(_SECTION_RE.finditer(user_message))
    if not matches:
        return sections, user_message.strip()
    request_start = 0
    for match in matches:
        title = match.group(1)
        end = _END_RE.search(user_message, match.end())
        body_end = end.start() if end else len(user_message)
        sections[title] = user_message[match.end() : body_end].strip()
        request_start = max(request_start, end.end() if end else body_end)
    request = user_message[request_start:]
    if marker := _REQUEST_RE.search(request):
        request = request[marker.end() :]
    return sections, request.strip()


_VERB_PREFIX = re.compile(
    r"^(?:请|帮我|麻烦|给我|再)*(?:出|做|生成|编写|写|设计|准备|来)?"
    r"(?:[一两二三四五六七八九十几]|\d+)?(?:份|套|个|张|篇|道)?(?:关于)?"
    r"(?:和|跟|与)?(?:上次|之前|以前)?(?:那份|那套)?(?:类似|相似|一样)?的?"
)


def _turns(thread: str) -> list[tuple[str, str]]:
    """(role, text) of each ‹用户›/‹助手› turn; a turn runs until the next marker."""
    marks = list(_TURN_RE.finditer(thread))
    turns = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(thread)
        text = thread[mark.start() : end]
        turns.append((mark.group(1), text.split(" ", 1)[1].strip() if " " in text else ""))
    return turns


def _gist(reply: str) -> str:
    """The first line of a reply that says something (not the demo's own framing)."""
    for line in reply.splitlines():
        line = line.strip()
        if line and DEMO_BANNER not in line and not line.startswith(("（", "-", "我读到")):
            return line
    return ""


def _topic(request: str) -> str:
    """The subject of an artifact request: 数据结构 in 「出一份数据结构试卷」."""
    match = re.search(
        r"([\u4e00-\u9fffA-Za-z0-9+#]{1,20}?)(试卷|测验|练习|教案|课件|作业)", request
    )
    if not match:
        return ""
    return _VERB_PREFIX.sub("", match.group(1)).rstrip("的")


def chat_reply(user_message: str, *, tool_results: Sequence[str] = ()) -> str:
    sections, request = _split_sections(user_message)
    lines = [f"{DEMO_BANNER}（无需联网的确定性演示回复，不代表真实模型的能力）"]

    remembered: list[str] = []
    if core := sections.get("核心记忆"):
        facts = [ln.lstrip("-• ").strip() for ln in core.splitlines() if ln.strip()]
        remembered.append("关于你，我记得：" + "；".join(_head(f, 40) for f in facts[:5]))
    if thread := sections.get("本会话前情"):
        turns = _turns(thread)
        last_user = next((t for role, t in reversed(turns) if role == "用户"), "")
        last_assistant = next((t for role, t in reversed(turns) if role == "助手"), "")
        if last_user:
            remembered.append(f"本会话中你上一轮说：「{_head(last_user, 60)}」")
        if artifact := re.search(r"演示产物：(《[^》\n]+》)", last_assistant):
            remembered.append(f"我上一轮给出的产物是{artifact.group(1)}")
        elif gist := _gist(last_assistant):
            remembered.append(f"我上一轮的回复：「{_head(gist, 60)}」")
        summary = re.search(r"（此前对话摘要）(.*?)(?:（最近对话）|$)", thread, re.S)
        if summary and summary.group(1).strip():
            remembered.append(f"更早的对话摘要：{_head(summary.group(1), 80)}")
    if recall := sections.get("相关历史"):
        first = next((ln for ln in recall.splitlines() if ln.strip()), "")
        remembered.append(f"我想起一次相关的历史：{_head(first, 80)}")
    if kb := sections.get("知识库检索结果"):
        remembered.append(f"知识库里找到：{_head(kb, 60)}")

    if remembered:
        lines.append("我读到的记忆：\n" + "\n".join(f"- {item}" for item in remembered))
    else:
        lines.append("（这次没有注入任何记忆。）")
    lines.append(f"你本轮的请求：「{_head(request, 120)}」")
    for result in tool_results:
        if _KB_BOUNDARY_RE.search(result):
            quote = kb_tool_quote(result)
            lines.append(f"我检索了知识库（kb_search），最相关的资料是：\n\n> {quote}")
        else:
            lines.append(f"我检索了知识库（kb_search），结果：{_head(result, 120)}")
    lines.append(_demo_body(request, sections))
    # Blank lines between the parts: the reply is Markdown, and a line right after a
    # list item would otherwise continue that item.
    return "\n\n".join(lines)


def _demo_body(request: str, sections: dict[str, str]) -> str:
    topic = _topic(request)
    if not topic and (thread := sections.get("本会话前情")):
        previous = [t for role, t in _TURN_RE.findall(thread) if role == "用户"]
        topic = next((_topic(p) for p in reversed(previous) if _topic(p)), "")
    kind = re.search(r"(简答题|选择题|填空题|判断题|计算题|应用题)", request)
    if topic and kind and re.search(r"换|改|替换|调整", request):
        count = re.search(r"([一两二三四五六七八九十]|\d+)\s*道", request)
        how_many = count.group(1) if count else "两"
        return (
            f"## 演示产物：《{topic}试卷》（修改版）\n\n"
            f"已按你的要求把**{kind.group(1)}**换了{how_many}道：\n\n"
            f"1. （新）结合实例说明{topic}中一种常见结构的优缺点\n"
            f"2. （新）比较{topic}中两种方法的时间复杂度（如 $O(n)$ 与 $O(\\log n)$），"
            "并说明适用场景\n\n"
            "其余题目保持不变。"
        )
    if "试卷" in request or "出题" in request:
        return _demo_exam_paper(topic or "本课程")
    return "演示回复：已记录你的请求。接入真实模型后，这里会是完整的回答。"


def _demo_exam_paper(subject: str) -> str:
    """A short exam paper in the Markdown a real model writes: headings, numbered
    questions, bold, one table and a couple of formulas (inline and display), so that a
    newcomer sees the chat page render them without a real model."""
    return "\n".join(
        [
            f"## 演示产物：《{subject}试卷》",
            "",
            "**考试时间**：90 分钟　**满分**：100 分",
            "",
            "### 一、选择题（每题 10 分，共 30 分）",
            "",
            f"1. {subject}基础概念辨析：下列说法**正确**的是（　）",
            f"2. {subject}性质判断：若 $f(x)=x^2-2ax+1$ 在区间 $[1,+\\infty)$ 上单调递增，"
            "则 $a$ 的取值范围是（　）",
            f"3. {subject}综合应用：某算法的时间复杂度为 $O(n\\log n)$，"
            "当 $n$ 扩大到原来的 2 倍时，耗时约变为原来的几倍？（　）",
            "",
            "### 二、简答题（每题 20 分，共 40 分）",
            "",
            f"1. 简述{subject}的核心思想。",
            f"2. 举例说明{subject}的一个典型应用。",
            "",
            "### 三、计算题（30 分）",
            "",
            "求解递推式，并写出计算过程：",
            "",
            "$$T(n)=2T\\left(\\frac{n}{2}\\right)+n,\\quad T(1)=1$$",
            "",
            "### 分值分布",
            "",
            "| 题型 | 题数 | 分值 |",
            "| --- | :-: | --: |",
            "| 选择题 | 3 | 30 |",
            "| 简答题 | 2 | 40 |",
            "| 计算题 | 1 | 30 |",
        ]
    )


def summarise(prompt: str, *, max_tokens: int = 600) -> str:
    """Extractive rolling summary: the old summary plus one line per new run.

    Every line starts with the run's ``#id`` marker; when the result is too long, the
    oldest lines are shortened to their marker first, so every folded run stays listed.
    """
    old_match = _SUMMARY_OLD_RE.search(prompt)
    old = old_match.group(1).strip() if old_match else ""
    if old in ("（无）", "(无)"):
        old = ""
    lines = [ln for ln in old.splitlines() if ln.strip()]
    blocks = RUN_MARKER_RE.split(prompt)
    # split() gives [preamble, id1, body1, id2, body2, ...]
    for run_id, body in zip(blocks[1::2], blocks[2::2], strict=False):
        user = re.search(r"^用户：(.*)$", body, re.M)
        assistant = re.search(r"^助手：(.*)$", body, re.M)
        parts = [f"#{run_id}"]
        if user:
            parts.append(f"用户：{_head(user.group(1), 40)}")
        if assistant:
            parts.append(f"助手：{_head(assistant.group(1), 40)}")
        lines.append(" ".join(parts))
    text = "\n".join(lines)
    index = 0
    while count_tokens(text) > max_tokens and index < len(lines):
        marker = lines[index].split(" ", 1)[0]
        lines[index] = marker
        index += 1
        text = "\n".join(lines)
    if count_tokens(text) > max_tokens:
        text = truncate_tokens(text, max_tokens, keep="tail")
    return text


def propose_facts(prompt: str) -> str:
    """Rule-based fact proposals from the teacher's own words only, as JSON or NONE."""
    match = _TEACHER_WORDS_RE.search(prompt)
    words = match.group(1) if match else ""
    facts = []
    for clause in re.split(r"[。！？!?\n；;]", words):
        clause = clause.strip(" ，,")
        if 4 <= len(clause) <= 80 and _FACT_TRIGGERS.search(clause):
            facts.append({"fact": clause, "evidence": clause, "confidence": 0.7})
    if not facts:
        return "NONE"
    return json.dumps({"facts": facts[:5]}, ensure_ascii=False)
