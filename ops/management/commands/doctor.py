"""``manage.py doctor``: what is wrong with this installation, one line per check.

Exits 1 if any check fails, so it can gate a deploy or feed a monitor.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.core.management.base import BaseCommand

from ops.doctor import doctor_run

OK, FAILED = "✓", "✗"


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


class Command(BaseCommand):
    help = "Check the database, queue, worker, providers, tokenizer, static files, time zone."

    def handle(self, *args: Any, **options: Any) -> None:
        results = doctor_run()
        width = max(_width(result.name) for result in results)
        for result in results:
            mark = OK if result.ok else FAILED
            padding = " " * (width - _width(result.name))
            line = f"{mark} {result.name}{padding}  {result.detail}"
            self.stdout.write(line if result.ok else self.style.ERROR(line))
            if not result.ok and result.hint:
                self.stdout.write(f"  {' ' * width}  → {result.hint}")
        failed = sum(not result.ok for result in results)
        if failed:
            self.stdout.write(self.style.ERROR(f"{failed} of {len(results)} checks failed"))
            raise SystemExit(1)
        self.stdout.write(self.style.SUCCESS(f"all {len(results)} checks passed"))
