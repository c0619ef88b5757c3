"""axe-core in a real page: the accessibility audit of the browser tests (issue #18).

axe-core is vendored at a pinned version (``tests/browser/vendor/``, ``make vendor``) and
evaluated through the DevTools protocol, so the chat page's Content-Security-Policy
(``script-src 'self'``) neither blocks it nor has to be loosened for the audit. Every
rule axe runs by default is run (WCAG 2.0/2.1 A and AA plus its best practices); a
violation of impact "serious" or "critical" fails the audit. The full result, minor and
moderate findings included, is written to ``artifacts/axe/<name>.json`` for review.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

VENDOR = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
BLOCKING = frozenset({"serious", "critical"})

RUN_AXE = """async () => {
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return {
        version: axe.version,
        violations: result.violations.map(v => ({
            id: v.id,
            impact: v.impact,
            help: v.help,
            helpUrl: v.helpUrl,
            tags: v.tags,
            nodes: v.nodes.map(n => ({
                target: n.target,
                html: n.html.slice(0, 300),
                summary: n.failureSummary,
            })),
        })),
    };
}"""


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    impact: str
    help: str
    targets: tuple[str, ...]

    def __str__(self) -> str:
        shown = ", ".join(self.targets[:6]) + (" …" if len(self.targets) > 6 else "")
        return f"[{self.impact}] {self.rule}: {self.help} ({len(self.targets)}: {shown})"


@dataclass(frozen=True, slots=True)
class Audit:
    name: str
    axe_version: str
    violations: tuple[Violation, ...]

    @property
    def blocking(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.impact in BLOCKING)


@cache
def axe_source() -> str:
    return VENDOR.read_text(encoding="utf-8")


def axe_audit(page: Any, *, name: str, report_dir: Path) -> Audit:
    """Run axe on the page as it is now; write its report; return the findings."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    raw = page.evaluate(RUN_AXE)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / f"{name}.json").write_text(
        json.dumps({"page": name, "url": page.url, **raw}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    violations = tuple(
        Violation(
            rule=v["id"],
            impact=v["impact"] or "minor",
            help=v["help"],
            targets=tuple(" ".join(map(str, n["target"])) for n in v["nodes"]),
        )
        for v in raw["violations"]
    )
    return Audit(name=name, axe_version=raw["version"], violations=violations)
