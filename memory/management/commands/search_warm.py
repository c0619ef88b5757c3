from typing import Any

from django.core.management.base import BaseCommand

from memory.recall.index import warm


class Command(BaseCommand):
    help = (
        "Compile the recall and knowledge-base search loop (numba) or load it from its disk "
        "cache, so that the first search of a new process does not wait for the compiler. "
        "make serve runs it before the web starts."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        warm()
