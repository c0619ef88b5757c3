"""The message catalogues: ``locale/<language>/LC_MESSAGES/django.po`` (issue #18).

The source strings are Chinese; each catalogue translates them into one other language
of ``settings.LANGUAGES`` (today English). One catalogue serves the templates, the
Python code and the pages' JavaScript (whose strings the views hand to the page).

- ``catalogue_update``: Django's ``makemessages`` (GNU gettext's xgettext and msgmerge;
  a developer's tool, like npm for ``make vendor``) with this project's options, then the
  file normalised with Babel: entries sorted, no source locations and fixed header dates,
  so that branches adding strings in parallel merge without conflicts.
- ``catalogue_compile``: ``.po`` → ``.mo`` with Babel (pure Python, BSD), not msgfmt, so
  a server needs no system package; placeholders (``%(n)s``) are checked on the way,
  like ``msgfmt --check-format``. Compiled files are build output (not committed): the
  Makefile, ``scripts/serve.sh`` and ``scripts/run.sh`` compile them.
- ``catalogue_check``: every message translated, none fuzzy, placeholders consistent,
  and the catalogue up to date with the source (``make lint``, like
  ``makemigrations --check``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po
from django.conf import settings
from django.utils.translation import to_locale

DOMAIN = "django"
# What makemessages reads: the project's code and templates, not tests, benchmarks,
# vendored or collected files.
IGNORED = ["tests", "benchmarks", "scripts", "static", "staticfiles", "artifacts", "locale"]
# Copied for the up-to-date check (makemessages writes work files beside the templates).
SOURCES = ["agents", "memory", "runs", "web", "ops", "config", "templates", "manage.py"]
# Fixed header dates: a date that changes on every update is a merge conflict.
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)


class CatalogueError(RuntimeError):
    """A catalogue that cannot be updated, compiled or trusted."""


@dataclass(frozen=True)
class CatalogueReport:
    language: str
    po: Path
    messages: int
    untranslated: list[str] = field(default_factory=list)
    fuzzy: list[str] = field(default_factory=list)
    format_errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not (self.untranslated or self.fuzzy or self.format_errors)


def locale_dir() -> Path:
    return Path(settings.LOCALE_PATHS[0])


def catalogue_languages() -> list[str]:
    """Every language of ``settings.LANGUAGES`` but the source language (Chinese)."""
    return [code for code, _name in settings.LANGUAGES if not code.startswith("zh")]


def po_path(language: str, root: Path | None = None) -> Path:
    return (root or locale_dir()) / to_locale(language) / "LC_MESSAGES" / f"{DOMAIN}.po"


def _read(path: Path) -> Catalog:
    if not path.exists():
        raise CatalogueError(f"no catalogue at {path} (run: make messages)")
    with path.open("rb") as handle:
        return read_po(handle, domain=DOMAIN, abort_invalid=True)


def _label(message_id: object) -> str:
    return str(message_id[0] if isinstance(message_id, tuple) else message_id)


def catalogue_report(language: str, root: Path | None = None) -> CatalogueReport:
    path = po_path(language, root)
    catalog = _read(path)
    messages = [m for m in catalog if m.id]
    untranslated = [
        _label(m.id)
        for m in messages
        if not (all(m.string) if isinstance(m.string, tuple) else m.string)
    ]
    format_errors = [
        f"{_label(m.id)}: {'; '.join(str(e) for e in errors)}" for m, errors in catalog.check()
    ]
    return CatalogueReport(
        language=language,
        po=path,
        messages=len(messages),
        untranslated=untranslated,
        fuzzy=[_label(m.id) for m in messages if m.fuzzy],
        format_errors=format_errors,
    )


def catalogue_compile(language: str, root: Path | None = None) -> CatalogueReport:
    """Write the ``.mo`` beside the ``.po``; refuse a catalogue with a placeholder error.

    Untranslated and fuzzy messages are left out of the ``.mo`` (the Chinese source
    shows), as msgfmt does; ``catalogue_check`` is what refuses them.
    """
    report = catalogue_report(language, root)
    if report.format_errors:
        raise CatalogueError(
            f"{report.po}: placeholders do not match:\n  " + "\n  ".join(report.format_errors)
        )
    catalog = _read(report.po)
    mo = report.po.with_suffix(".mo")
    partial = mo.with_suffix(".mo.tmp")
    with partial.open("wb") as handle:
        write_mo(handle, catalog, use_fuzzy=False)
    partial.replace(mo)  # a process reading the old file never sees half a new one
    return report


def catalogues_compile() -> list[CatalogueReport]:
    return [catalogue_compile(language) for language in catalogue_languages()]


def catalogue_stale(language: str) -> str | None:
    """Why the compiled catalogue cannot be used as it is, or None (doctor)."""
    po = po_path(language)
    mo = po.with_suffix(".mo")
    if not po.exists():
        return f"no {_shown(po)}"
    if not mo.exists():
        return f"{_shown(mo)} not compiled"
    if mo.stat().st_mtime < po.stat().st_mtime:
        return f"{_shown(mo)} older than its .po"
    return None


def _shown(path: Path) -> str:
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


def _normalise(path: Path) -> None:
    """Sorted entries, no locations, fixed dates: a diff shows only real changes."""
    catalog = _read(path)
    catalog.header_comment = (
        "# agent-memory: the interface in this language (source strings: Chinese).\n"
        "# Updated by `make messages` (manage.py catalogue_update); translate every msgstr."
    )
    catalog.fuzzy = False
    catalog.creation_date = FIXED_DATE
    catalog.revision_date = FIXED_DATE
    catalog.project = "agent-memory"
    catalog.version = ""
    catalog.msgid_bugs_address = ""
    catalog.last_translator = ""
    catalog.language_team = ""
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, no_location=True, sort_output=True, ignore_obsolete=True)


def _makemessages(project: Path, languages: list[str]) -> None:
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        raise CatalogueError(
            "makemessages needs GNU gettext (xgettext, msgmerge): apt-get install gettext"
        )
    command = [sys.executable, "manage.py", "makemessages", "--no-location", "--no-obsolete"]
    command += [f"--locale={language}" for language in languages]
    command += [f"--ignore={pattern}" for pattern in IGNORED]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CatalogueError(f"makemessages failed:\n{done.stdout}{done.stderr}")


def catalogues_update() -> list[CatalogueReport]:
    """Bring every catalogue up to date with the source, then compile it."""
    languages = catalogue_languages()
    _makemessages(Path(settings.BASE_DIR), languages)
    for language in languages:
        _normalise(po_path(language))
    return catalogues_compile()


def catalogue_missing(language: str) -> tuple[list[str], list[str]]:
    """(messages in the source but not in the catalogue, messages no longer in the source).

    makemessages runs on a copy of the source, so the working tree is not touched.
    """
    committed = {(m.context, m.id) for m in _read(po_path(language)) if m.id}
    with tempfile.TemporaryDirectory(prefix="catalogue-") as work:
        copy = Path(work)
        for name in SOURCES:
            source = Path(settings.BASE_DIR) / name
            if source.is_dir():
                shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, copy / name)
        (copy / "locale").mkdir()
        _makemessages(copy, [language])
        fresh = {(m.context, m.id) for m in _read(po_path(language, copy / "locale")) if m.id}
    return (
        sorted(_label(mid) for _ctx, mid in fresh - committed),
        sorted(_label(mid) for _ctx, mid in committed - fresh),
    )
