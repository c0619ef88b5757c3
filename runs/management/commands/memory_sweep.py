import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from runs.sweeper import recovery_sweep


class Command(BaseCommand):
    help = (
        "Recover the memory pipeline: fail runs stuck in 'running', re-enqueue finished "
        "runs whose memory job has not completed, and threads whose summary lags."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--stale-after",
            type=int,
            default=None,
            help="seconds after which queued memory work counts as lost "
            "(default: MEMORY_JOB_STALE_AFTER_SECONDS; 0 right after a restart)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = recovery_sweep(stale_after_seconds=options["stale_after"])
        self.stdout.write(json.dumps(report.as_dict()))
