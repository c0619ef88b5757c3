"""``manage.py catalogue_check`` (``make lint``): every catalogue complete and current."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ops.catalogues import (
    CatalogueError,
    catalogue_languages,
    catalogue_missing,
    catalogue_report,
)


class Command(BaseCommand):
    help = "Fail if a message is untranslated, fuzzy, mis-formatted, new or gone."

    def handle(self, *args: Any, **options: Any) -> None:
        problems: list[str] = []
        try:
            for language in catalogue_languages():
                report = catalogue_report(language)
                new, gone = catalogue_missing(language)
                problems += [f"{language}: untranslated: {t!r}" for t in report.untranslated]
                problems += [f"{language}: fuzzy: {t!r}" for t in report.fuzzy]
                problems += [f"{language}: placeholders: {e}" for e in report.format_errors]
                problems += [f"{language}: not in the catalogue: {t!r}" for t in new]
                problems += [f"{language}: no longer in the source: {t!r}" for t in gone]
        except CatalogueError as exc:
            raise CommandError(str(exc)) from exc
        if problems:
            raise CommandError(
                "the message catalogues need `make messages` and a translation:\n  "
                + "\n  ".join(problems)
            )
        self.stdout.write("message catalogues complete and up to date")
