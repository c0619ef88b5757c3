"""A real tool for tests and benchmarks of the tool loop: a term dictionary lookup.

It has the shape of ``kb_search`` without the knowledge base behind it (a result inside
the knowledge base's boundary, the ids behind it) and a few words that make it misbehave
on purpose: ``崩溃`` crashes, ``超长`` ignores its budget, ``预算`` answers with its budget.
Every call's scope is appended to ``seen_scopes``.
"""

from __future__ import annotations

from typing import Any

from agents.tokens import count_tokens
from memory import boundary
from memory.scope import Scope
from runs.tools import Tool, ToolContext, ToolRejected, ToolResult

GLOSSARY: dict[str, tuple[int, str]] = {
    "二叉树": (101, "二叉树：每个结点最多有两个子结点的树。"),
    "栈": (102, "栈：后进先出（LIFO）的线性表。"),
    **{f"词条{i}": (1000 + i, f"词条{i}的解释：" + "数据结构的基本概念。" * 5) for i in range(100)},
}
seen_scopes: list[Scope] = []


def glossary_result(word: str) -> str:
    """The text the tool returns for a word in the glossary."""
    return f"{boundary.KB_HEADER}\n{GLOSSARY[word][1]}\n{boundary.KB_FOOTER}"


def _lookup(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    seen_scopes.append(context.scope)
    word = arguments["word"].strip()
    if not word:
        raise ToolRejected("词条不能为空。")
    if word == "崩溃":
        raise RuntimeError("the glossary's backend is down")
    if word == "超长":
        text = "很长的资料。" * 2000
    elif word == "预算":
        text = f"budget={context.budget}"
    elif word not in GLOSSARY:
        text = f"词典里没有「{word}」。"
    else:
        text = glossary_result(word)
        return ToolResult(text=text, tokens=count_tokens(text), ids=(GLOSSARY[word][0],))
    return ToolResult(text=text, tokens=count_tokens(text))


GLOSSARY_TOOL = Tool(
    name="glossary",
    description="查数据结构术语词典",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 20}},
        "required": ["word"],
        "additionalProperties": False,
    },
    call=_lookup,
)
