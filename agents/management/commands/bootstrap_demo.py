import json
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from agents.services_demo import demo_bootstrap


class Command(BaseCommand):
    help = "Create (or refresh) a demo school, teacher and agent on the offline provider."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", default="演示学校", help="tenant name")
        parser.add_argument("--username", default="teacher", help="teacher's username")
        parser.add_argument("--json", action="store_true", help="print the account as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        account = demo_bootstrap(tenant_name=options["tenant"], username=options["username"])
        if options["json"]:
            self.stdout.write(json.dumps(asdict(account), ensure_ascii=False))
            return
        self.stdout.write(
            f"tenant {account.tenant_id}, agent {account.agent_id}\n"
            f"username: {account.username}\npassword: {account.password}\n"
            f"token:    {account.token}"
        )
