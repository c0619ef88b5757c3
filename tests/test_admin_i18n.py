"""The admin speaks one language (issue #18): every model, field, column, filter and
action of ours is named in Chinese through gettext, and in English from the catalogue."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import label_for_field
from django.db import models
from django.utils import translation
from django.utils.functional import Promise

from tests.factories import make_teacher, run_via_api

OURS = ("agents", "memory", "runs", "web", "ops")
CJK = re.compile(r"[\u4e00-\u9fff]")
LETTERS = re.compile(r"^[A-Za-z][A-Za-z0-9 ,.()/'-]*$")


def our_models() -> list[type[models.Model]]:
    return [m for label in OURS for m in apps.get_app_config(label).get_models()]


def our_admins() -> list[tuple[type[models.Model], admin.ModelAdmin[Any]]]:
    return [(m, a) for m, a in admin.site._registry.items() if m._meta.app_label in OURS]


def in_both(name: Any) -> tuple[str, str]:
    assert isinstance(name, Promise), f"{name!r} is not a gettext_lazy string"
    with translation.override("zh-hans"):
        chinese = str(name)
    with translation.override("en"):
        english = str(name)
    return chinese, english


def assert_named(name: Any, where: str) -> None:
    chinese, english = in_both(name)
    assert CJK.search(chinese), f"{where}: {chinese!r} is not Chinese"
    assert LETTERS.match(english), f"{where}: {english!r} is not English (catalogue)"


def test_every_app_and_model_of_ours_has_a_name_in_both_languages() -> None:
    for label in OURS:
        assert_named(apps.get_app_config(label).verbose_name, label)
    for model in our_models():
        assert_named(model._meta.verbose_name, model.__name__)
        assert_named(model._meta.verbose_name_plural, f"{model.__name__} (plural)")


def test_every_field_of_ours_has_a_name_in_both_languages() -> None:
    for model in our_models():
        for field in model._meta.get_fields():
            if field.auto_created or not field.concrete:
                continue  # the implicit id and reverse relations
            assert_named(field.verbose_name, f"{model.__name__}.{field.name}")
            choices = getattr(field, "choices", None) or []
            if list(choices) == list(settings.LANGUAGES):
                continue  # languages are named in themselves (简体中文, English)
            for value, label in choices:
                assert_named(label, f"{model.__name__}.{field.name}={value}")


def test_every_column_filter_and_action_of_our_admin_is_named_in_both_languages() -> None:
    assert len(our_admins()) >= 10
    for model, model_admin in our_admins():
        where = type(model_admin).__name__
        for column in model_admin.list_display:
            if column in {"id", "pk"}:
                continue
            label = label_for_field(column, model, model_admin)
            with translation.override("en"):
                english = str(label_for_field(column, model, model_admin))
            assert CJK.search(str(label)) or column == "__str__", f"{where}.{column}: {label!r}"
            assert not CJK.search(english), f"{where}.{column} in English: {english!r}"
        for spec in model_admin.list_filter:
            if isinstance(spec, tuple):  # (field, filter class): the field names the filter
                spec = spec[0]
            assert isinstance(spec, str), f"{where}: a filter class needs its own check"
            *path, last = spec.split("__")
            target: Any = model
            for part in path:
                target = target._meta.get_field(part).related_model
            assert_named(target._meta.get_field(last).verbose_name, f"{where} filter {spec}")
        for action in model_admin.actions or []:
            if callable(action):
                assert_named(action.short_description, f"{where} action {action.__name__}")


@pytest.mark.django_db
def test_long_titles_are_cut_by_css_with_the_full_text_on_hover(admin_client: Any) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    title = "关于数据结构期中考试的复习安排以及简答题如何替换两道的长标题讨论"
    run_via_api(teacher, title)
    html = admin_client.get("/admin/memory/thread/").content.decode()
    assert f'<span class="cell-truncate" title="{title}">{title}</span>' in html
    assert "/static/web/admin.css" in html
