"""Simulated teachers for the load test (``make load``; benchmarks/load.py runs it).

Each locust user is one teacher, already logged in (benchmarks/load.py writes the
accounts, each with an API token and a browser session, to ``LOAD_ACCOUNTS``): they chat
in threads — a sync run or a streamed run, continuing the thread and starting a new one
every few turns — and now and then open the memory panel (the page itself, with the
browser session) and confirm a proposed fact through the panel's own form (CSRF
included). Some messages carry a fact worth remembering, so that candidates appear.

One task per ``LOAD_PACE`` seconds per user (constant pacing), so the offered load is
users / pace tasks per second whatever the latency; with the default pace a teacher
sends about 18 runs a minute, below the per-user run throttle (about 30 a minute).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

from locust import FastHttpUser, constant_pacing, task
from requests.cookies import create_cookie

ACCOUNTS: list[dict[str, Any]] = json.loads(Path(os.environ["LOAD_ACCOUNTS"]).read_text())
PACE = float(os.environ.get("LOAD_PACE", "3"))
TURNS_PER_THREAD = 6
_accounts = itertools.count()
_openings = itertools.count()

# What teachers ask; the ones that say something about the teacher ("我教…", "以后…")
# make the memory propose a fact.
MESSAGES = [
    "出一份数据结构试卷",
    "简答题换两道，难度降低一点",
    "我教高二数学，以后出题都用人教版教材",
    "给这份试卷加一道关于二叉树遍历的计算题",
    "把选择题改成五道",
    "以后每次出卷都附上参考答案",
    "出一份线性代数的课堂小测验",
    "我们班下周考期中，请出一份复习提纲",
    "把第三题换成图的最短路径",
    "我习惯用表格列出分值分布",
]
CONFIRM_FORM = re.compile(r'action="(/memory/candidates/\d+/confirm/)"')


class Teacher(FastHttpUser):
    wait_time = constant_pacing(PACE)

    def on_start(self) -> None:
        account = ACCOUNTS[next(_accounts) % len(ACCOUNTS)]
        self.agent_id = int(account["agent_id"])
        self.auth = {"Authorization": f"Token {account['token']}"}
        self.csrf = str(account["csrf"])
        host = self.host.split("://", 1)[-1].split(":", 1)[0]
        for name, value in (("sessionid", account["session"]), ("csrftoken", self.csrf)):
            self.client.cookiejar.set_cookie(create_cookie(name, value, domain=host))
        self.thread_id: str | None = None
        self.turns = 0
        # Where this teacher starts in MESSAGES: a counter of its own (drawing from
        # _accounts gave user k account 2k, so with an even number of accounts two users
        # shared one teacher, and one's confirm found the candidate the other had taken).
        self.said = next(_openings)

    def _message(self) -> dict[str, Any]:
        if self.turns >= TURNS_PER_THREAD:
            self.thread_id, self.turns = None, 0
        self.turns += 1
        self.said += 1
        return {"input": MESSAGES[self.said % len(MESSAGES)], "thread_id": self.thread_id}

    @task(5)
    def chat(self) -> None:
        path = f"/api/agents/{self.agent_id}/run"
        with self.client.post(
            path, json=self._message(), headers=self.auth, name="run (sync)", catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}: {(response.text or '')[:200]}")
                return
            run = response.json()
            if run.get("status") != "completed":
                response.failure(f"run {run.get('id')} {run.get('status')}")
                return
            self.thread_id = run["thread_id"]

    @task(5)
    def chat_stream(self) -> None:
        path = f"/api/agents/{self.agent_id}/run/stream"
        headers = {**self.auth, "Accept": "text/event-stream"}
        with self.client.post(
            path, json=self._message(), headers=headers, name="run (stream)", catch_response=True
        ) as response:
            text = response.text or ""
            if response.status_code != 200 or "event: done" not in text:
                response.failure(f"HTTP {response.status_code}: {text[-200:]}")
                return
            started = text.split("\n\n", 1)[0]
            data = json.loads(started.split("data: ", 1)[1])
            self.thread_id = data["thread_id"]
            done = json.loads(text.rsplit("event: done\ndata: ", 1)[1].split("\n", 1)[0])
            if done["run"].get("status") != "completed":
                response.failure(f"run {done['run'].get('id')} {done['run'].get('status')}")

    @task(1)
    def memory_panel(self) -> None:
        page = self.client.get(f"/memory/?agent={self.agent_id}", name="memory panel")
        if page.status_code != 200:
            return
        confirm = CONFIRM_FORM.search(page.text or "")
        if confirm is None:
            return
        # The panel's own form: a POST with the CSRF token, redirected back to the page.
        self.client.post(
            confirm.group(1),
            data={"csrfmiddlewaretoken": self.csrf, "agent": str(self.agent_id)},
            headers={"Referer": f"{self.host}/memory/?agent={self.agent_id}"},
            name="confirm candidate",
        )
