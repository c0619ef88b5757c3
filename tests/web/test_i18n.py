"""Every page in both languages (issue #18): no untranslated string of ours in English,
no English string in Chinese, and every literal text of our templates goes through
``{% translate %}``.

The English check reads what a person meets on the page: text, the attributes a screen
reader or a hover shows (title, aria-label, placeholder, alt, button values) and the
strings the page hands to its JavaScript (``json_script``). What the teacher or the
model wrote is data, not interface: every text value stored in the rows the test made
(and each row's ``str()``) is removed first; a Chinese character left over is an
untranslated string. Text marked with another ``lang`` (the language switch names each
language in itself) is skipped.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from django.apps import apps
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.db import models
from django.template.base import Lexer, TokenType
from django.test import Client

from agents.models import Membership
from memory.models import CoreCandidate, Thread
from ops.catalogues import po_path
from tests.factories import Teacher, conversation_with_memories, make_teacher

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
SHOWN_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


class Segments(HTMLParser):
    """The page's visible and spoken strings, without those marked in another language."""

    def __init__(self, language: str) -> None:
        super().__init__(convert_charrefs=True)
        self.language = language
        self.found: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # (tag, in another language)
        self.json = False
        self.skip = False

    def _foreign(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        lang = values.get("lang")
        foreign = self._foreign() or (lang is not None and lang != self.language and tag != "html")
        if not foreign:
            self.found += [values[a] for a in SHOWN_ATTRIBUTES if values.get(a)]
            button = tag == "input" and values.get("type") in {"submit", "button"}
            if button and values.get("value"):
                self.found.append(values["value"])
        if tag not in VOID:
            self.stack.append((tag, foreign))
        self.json = tag == "script" and values.get("type") == "application/json"
        self.skip = tag in {"script", "style"} and not self.json

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break
        self.json = self.skip = False

    def handle_data(self, data: str) -> None:
        if self.skip or self._foreign() or not data.strip():
            return
        if self.json:
            self.found += list(_strings(json.loads(data)))
        else:
            self.found.append(data.strip())


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def segments(html: str, language: str) -> list[str]:
    parser = Segments(language)
    parser.feed(html)
    return parser.found


def stored_texts() -> list[str]:
    """Every text the rows of our apps hold (and its lines), each row's str(): data."""
    texts: set[str] = set()
    for config in (apps.get_app_config(label) for label in ("agents", "memory", "auth")):
        for model in config.get_models():
            fields = [
                f.name
                for f in model._meta.get_fields()
                if isinstance(f, models.CharField | models.TextField) and not f.choices
            ]
            for row in model.objects.all():
                texts.add(str(row))
                texts.update(str(getattr(row, name) or "") for name in fields)
    texts |= {line.strip() for text in texts for line in text.splitlines()}  # <br> per line
    return sorted((t for t in texts if t), key=len, reverse=True)


def untranslated(html: str, data: list[str]) -> list[str]:
    left = []
    for segment in segments(html, "en"):
        for text in data:
            segment = segment.replace(text, "")
        if CJK.search(segment):
            left.append(segment)
    return left


# -- the pages ------------------------------------------------------------------------------
@pytest.fixture
def populated() -> Teacher:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    conversation_with_memories(teacher)
    return teacher


def operator(teacher: Teacher) -> Client:
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops")
    Membership.objects.create(tenant=teacher.tenant, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


TEACHER_PAGES = ["/chat/", "/memory/"]
ADMIN_PAGES = [
    "/admin/",
    "/admin/agents/",
    "/admin/memory/",
    "/admin/agents/agent/",
    "/admin/agents/agent/{agent}/change/",
    "/admin/agents/provider/",
    "/admin/agents/provider/{provider}/change/",
    "/admin/agents/run/",
    "/admin/agents/run/{run}/change/",
    "/admin/agents/tenant/",
    "/admin/agents/tenant/{tenant}/change/",
    "/admin/memory/thread/",
    "/admin/memory/thread/{thread}/change/",
    "/admin/memory/memoryop/",
    "/admin/memory/corecandidate/",
    "/admin/memory/corecandidate/{candidate}/change/",
    "/admin/memory/corefact/",
    "/admin/memory/redlineaudit/",
    "/admin/memory/recallentry/",
    "/admin/memory/recallentry/{recall}/change/",
    "/admin/memory/runcontext/",
]


def pages(teacher: Teacher) -> list[tuple[str, Client]]:
    """(path, a client allowed to see it) for every page, login included."""
    ids = {
        "agent": teacher.agent.pk,
        "provider": teacher.agent.provider_id,
        "run": teacher.agent.runs.first().pk,  # type: ignore[union-attr]
        "tenant": teacher.tenant.pk,
        # Admin URLs escape "_" (th_22… would read as th"…): quote, as the admin does.
        "thread": quote(Thread.objects.first().pk),  # type: ignore[union-attr]
        "candidate": CoreCandidate.objects.first().pk,  # type: ignore[union-attr]
        "recall": teacher.agent.runs.first().recall_entry.pk,  # type: ignore[union-attr]
    }
    own = Client()
    own.force_login(teacher.user)
    ops = operator(teacher)
    return (
        [("/accounts/login/", Client()), ("/admin/login/", Client())]
        + [(path, own) for path in TEACHER_PAGES]
        + [(path.format(**ids), ops) for path in ADMIN_PAGES]
    )


def english_messages() -> set[str]:
    with po_path("en").open("rb") as handle:
        catalogue = read_po(handle)
    found: set[str] = set()
    for message in catalogue:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        found.update(s for s in strings if s and s not in ids and re.search("[A-Za-z]{3}", s))
    return found


def test_every_page_in_english_shows_no_untranslated_string(populated: Teacher) -> None:
    visited = pages(populated)
    data = stored_texts()
    for path, client in visited:
        response = client.get(path, HTTP_ACCEPT_LANGUAGE="en")
        assert response.status_code == 200, path
        html = response.content.decode()
        assert '<html lang="en"' in html, path
        assert untranslated(html, data) == [], path


def test_every_page_in_chinese_shows_no_english_translation(populated: Teacher) -> None:
    english = english_messages()
    for path, client in pages(populated):
        response = client.get(path, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
        assert response.status_code == 200, path
        html = response.content.decode()
        assert '<html lang="zh-hans"' in html, path
        shown = set(segments(html, "zh-hans"))
        assert shown & english == set(), path


def test_the_check_finds_an_untranslated_string() -> None:
    """The English check itself: a Chinese label is caught, data and lang=zh are not."""
    page = (
        '<html lang="en"><body><h1>Memory</h1><p>我教八年级数学</p>'
        '<button aria-label="关闭">x</button><span lang="zh-hans">简体中文</span>'
        '<script type="application/json">{"a": "保存"}</script></body></html>'
    )
    assert untranslated(page, ["我教八年级数学"]) == ["关闭", "保存"]


# -- our templates: no literal text outside {% translate %} ---------------------------------
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
# Symbols that are no words in any language.
SYMBOLS = re.compile(r"^[\s×☰·|/:()\[\]{}<>\"'!?.,;+\-–—…§]*$")


class LiteralText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [v for a, v in attrs if a in SHOWN_ATTRIBUTES and v]
        self.code = tag in {"script", "style"}

    def handle_endtag(self, tag: str) -> None:
        self.code = False

    def handle_data(self, data: str) -> None:
        if not self.code:
            self.found.append(data)


# Blocks whose content is markup, not text (base.html puts it in an attribute).
MARKUP_BLOCKS = {"body_class"}


def literal_texts(source: str) -> list[str]:
    """Text of a template that reaches the page untranslated (tags and variables become §)."""
    kept: list[str] = []
    depth = 0  # inside {% blocktranslate %}, {% comment %} or a markup block
    for token in Lexer(source).tokenize():
        words = token.contents.split()
        word = words[0] if words else ""
        opening = {"blocktranslate", "blocktrans", "comment"}
        if token.token_type is TokenType.BLOCK and (
            word in opening or (word == "block" and words[1:2] and words[1] in MARKUP_BLOCKS)
        ):
            depth += 1
        elif (
            token.token_type is TokenType.BLOCK
            and depth
            and word
            in {
                "endblocktranslate",
                "endblocktrans",
                "endcomment",
                "endblock",
            }
        ):
            depth -= 1
        elif depth == 0 and token.token_type is TokenType.TEXT:
            kept.append(token.contents)
        elif depth == 0:
            kept.append("§")
    parser = LiteralText()
    parser.feed("".join(kept))
    return [
        text.strip()
        for text in parser.found
        if not SYMBOLS.match(text.replace("§", ""))
        and (re.search(r"\w", text.replace("§", "")) or CJK.search(text))
    ]


def test_our_templates_have_no_literal_text() -> None:
    assert TEMPLATES, "no templates found"
    found = {str(path.relative_to(ROOT)): literal_texts(path.read_text()) for path in TEMPLATES}
    assert {path: texts for path, texts in found.items() if texts} == {}


def test_the_template_check_finds_literal_text() -> None:
    source = (
        '{% load i18n %}<h1>{% translate "记忆" %}</h1><p>未翻译</p>'
        '<button aria-label="Close">×</button>{# a comment #}'
        "{% blocktranslate with n=1 %}共 {{ n }} 条{% endblocktranslate %}"
        "{% comment %}Not shown{% endcomment %}"
    )
    assert literal_texts(source) == ["未翻译", "Close"]
