import json
from argparse import FileType
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from memory.services.legacy_import import ImportRejected, legacy_import, report_lines


class Command(BaseCommand):
    help = (
        "Import the old platform's core_memory.json (as confirmed facts, through the red "
        "line) and recall_log.jsonl (as runs and recall entries) into one teacher's memory "
        "with one agent. Idempotent; each file in one transaction."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", type=int, required=True, help="the agent's id")
        parser.add_argument("--user", required=True, help="the teacher's username")
        parser.add_argument("--core", type=FileType("rb"), help="core_memory.json")
        parser.add_argument("--recall", type=FileType("rb"), help="recall_log.jsonl")
        parser.add_argument("--dry-run", action="store_true", help="report only, store nothing")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["core"] is None and options["recall"] is None:
            raise CommandError("give --core, --recall or both")
        agent = Agent.objects.select_related("tenant").filter(pk=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']}")
        owner = get_user_model().objects.filter(username=options["user"]).first()
        if owner is None:
            raise CommandError(f"no user {options['user']!r}")
        try:
            report = legacy_import(
                agent=agent,
                owner=owner,
                core=options["core"].read() if options["core"] else None,
                recall=options["recall"].read() if options["recall"] else None,
                dry_run=options["dry_run"],
                core_name=options["core"].name if options["core"] else "",
                recall_name=options["recall"].name if options["recall"] else "",
            )
        except ImportRejected as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False))
        else:
            for line in report_lines(report):
                self.stdout.write(line)
        if not report.ok:
            raise CommandError("a file could not be read; nothing of it was imported")
