"""Mode prompts: optional task framing a request can ask for with ``context.mode``.

Trusted operator text (not history): it joins the system message and is charged to the
read-path ledger like every injected section.
"""

from __future__ import annotations

MODE_PROMPTS: dict[str, str] = {
    "exam": "当前模式：出题组卷。请按题型分节输出试题，标注每题分值，并在末尾附参考答案。",
    "grading": "当前模式：批改。请逐条指出问题并给出修改建议，不要编造学生信息。",
    "lesson": "当前模式：备课。请按教学目标、重难点、教学过程、作业设计组织内容。",
    "chat": "",
}
