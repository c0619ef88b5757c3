"""The message catalogues: complete, compiled by Babel into what Django reads, checked.

(Whether the catalogue is current with the source is ``manage.py catalogue_check``, run
by ``make lint``: it needs GNU gettext's xgettext.)
"""

from __future__ import annotations

import gettext
import os
import time
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import translation

from ops.catalogues import (
    CatalogueError,
    catalogue_compile,
    catalogue_languages,
    catalogue_report,
    po_path,
)
from ops.doctor import check_catalogues

PO_HEADER = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=utf-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

"""


def write_po(root: Path, body: str) -> Path:
    path = po_path("en", root)
    path.parent.mkdir(parents=True)
    path.write_text(PO_HEADER + body, encoding="utf-8")
    return path


def test_english_is_the_one_catalogue_and_every_message_is_translated() -> None:
    assert catalogue_languages() == ["en"]
    report = catalogue_report("en")
    assert report.messages > 200
    assert report.untranslated == []
    assert report.fuzzy == []
    assert report.format_errors == []


def test_the_compiled_catalogue_is_what_django_shows() -> None:
    with translation.override("en"):
        assert translation.gettext("新建会话") == "New conversation"
        assert translation.gettext("已确认 %(n)s / %(cap)s") % {"n": 1, "cap": 30} == (
            "Confirmed 1 / 30"
        )
        assert translation.ngettext("%(n)s 条", "%(n)s 条", 1) % {"n": 1} == "1 item"
        assert translation.ngettext("%(n)s 条", "%(n)s 条", 3) % {"n": 3} == "3 items"
    with translation.override("zh-hans"):
        assert translation.gettext("新建会话") == "新建会话"


def test_a_placeholder_lost_in_translation_is_refused(tmp_path: Path) -> None:
    write_po(
        tmp_path,
        '#, python-format\nmsgid "已选 %(n)s 条"\nmsgstr "%(count)s selected"\n',
    )
    report = catalogue_report("en", tmp_path)
    assert report.format_errors and "已选" in report.format_errors[0]
    with pytest.raises(CatalogueError, match="placeholders"):
        catalogue_compile("en", tmp_path)
    assert not po_path("en", tmp_path).with_suffix(".mo").exists()


def test_untranslated_and_fuzzy_messages_are_reported_and_left_out(tmp_path: Path) -> None:
    write_po(
        tmp_path,
        'msgid "保存"\nmsgstr "Save"\n\n'
        'msgid "取消"\nmsgstr ""\n\n'
        '#, fuzzy\nmsgid "关闭"\nmsgstr "Clos"\n',
    )
    report = catalogue_compile("en", tmp_path)
    assert (report.untranslated, report.fuzzy, report.complete) == (["取消"], ["关闭"], False)
    mo = po_path("en", tmp_path).with_suffix(".mo")
    with mo.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    assert compiled.gettext("保存") == "Save"
    assert compiled.gettext("取消") == "取消"  # the Chinese source shows
    assert compiled.gettext("关闭") == "关闭"


def test_doctor_sees_a_catalogue_not_compiled_or_older_than_its_source(tmp_path: Path) -> None:
    po = write_po(tmp_path, 'msgid "保存"\nmsgstr "Save"\n')
    with override_settings(LOCALE_PATHS=[tmp_path]):
        missing = check_catalogues()
        assert not missing.ok and "not compiled" in missing.detail
        assert "catalogue_compile" in missing.hint
        catalogue_compile("en")
        assert check_catalogues().ok
        later = time.time() + 5
        os.utime(po, (later, later))
        stale = check_catalogues()
    assert not stale.ok and "older than its .po" in stale.detail
