"""``manage.py catalogue_update`` (``make messages``): the catalogues follow the source."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ops.catalogues import CatalogueError, catalogues_update


class Command(BaseCommand):
    help = "makemessages for every language but Chinese, normalised and compiled."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            reports = catalogues_update()
        except CatalogueError as exc:
            raise CommandError(str(exc)) from exc
        for report in reports:
            self.stdout.write(f"{report.po}: {report.messages} messages")
            for text in report.untranslated + report.fuzzy:
                self.stdout.write(f"  to translate: {text!r}")
