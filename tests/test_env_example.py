"""Every variable the configuration reads is listed in .env.example (STYLE.md 13)."""

from __future__ import annotations

import re

from tests.cluster import ROOT

READ = re.compile(r"""\benv_(?:str|bool|int|float|list|rate)\(\s*["']([A-Z][A-Z0-9_]*)["']""")
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=", re.M)


def test_every_variable_read_by_the_configuration_is_in_env_example() -> None:
    read = {
        name
        for path in sorted((ROOT / "config").glob("*.py"))
        for name in READ.findall(path.read_text())
    }
    assert {"DJANGO_SECURE", "Q_BROKER_URL", "Q_WORKERS", "WEB_PROCESSES"} <= read
    listed = set(LISTED.findall((ROOT / ".env.example").read_text()))
    assert sorted(read - listed) == []
