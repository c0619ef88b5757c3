"""``manage.py catalogue_compile``: compile the message catalogues (.po → .mo) with Babel."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ops.catalogues import CatalogueError, catalogues_compile


class Command(BaseCommand):
    help = "Compile locale/*/LC_MESSAGES/django.po (pure Python; no GNU gettext needed)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            reports = catalogues_compile()
        except CatalogueError as exc:
            raise CommandError(str(exc)) from exc
        for report in reports:
            missing = len(report.untranslated) + len(report.fuzzy)
            self.stdout.write(
                f"{report.language}: {report.messages} messages compiled"
                + (f", {missing} untranslated or fuzzy (shown in Chinese)" if missing else "")
            )
