"""Development sets for episodic recall, in one shape: scopes of entries and questions.

Used by ``benchmarks/recall_eval.py``. Each question carries what the product's query
builder takes (the message, the thread's recent turns, a summary), its relevant entries
(empty: no relevant past run) and the other people's scopes it is also asked against.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_teacher_data

from tests.devdata import dev_data

MADIAL = dev_data() / "recall-dev" / "madial"
#: Turns the product keeps verbatim in a thread (settings.THREAD_RECENT_TURNS).
RECENT_TURNS = 2
#: Share of MADial dialogues held back from fitting (chosen by a hash of the number).
HELD_BACK_SHARE = 0.3
#: Teachers held back from fitting.
HELD_BACK_TEACHERS = 10

_LINE = re.compile(r'^\s*<([^>]*)>\s*:\s*"?(.*?)"?\s*$', re.S)
_ASSISTANT = "Assistant"


@dataclass(frozen=True)
class Ask:
    qid: int
    scope: int
    message: str
    turns: tuple[tuple[str, str | None], ...]  # earlier (user, assistant) turns, oldest first
    summary: str
    relevant: frozenset[int]
    others: tuple[int, ...]  # other people's scopes it is also asked against
    kind: str = ""


@dataclass
class DevSet:
    name: str
    scopes: dict[int, list[tuple[int, str]]]
    asks: list[Ask]
    held_back: set[int] = field(default_factory=set)


def _json_lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _speaker_turns(dialogue: list[str], upto: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in dialogue[:upto]:
        stripped = line.strip()
        if stripped in ("<BOD>", "<EOD>"):
            continue
        match = _LINE.match(stripped)
        if match:
            out.append((match.group(1).strip(), match.group(2)))
        else:  # one English line lost its speaker tag; it is an assistant turn
            out.append((_ASSISTANT, stripped.strip("<>")))
    return out


def as_conversation(
    lines: list[tuple[str, str]],
) -> tuple[str, tuple[tuple[str, str | None], ...], str]:
    """(message, recent turns, summary) of a dialogue, as a thread would hold it: the
    last user utterance is the message; before it, user utterances with the assistant's
    reply are turns; the last :data:`RECENT_TURNS` are verbatim, the older user turns
    stand in for the rolling summary (the product's summary is written by a model)."""
    last_user = max((i for i, (s, _) in enumerate(lines) if s != _ASSISTANT), default=-1)
    message = lines[last_user][1] if last_user >= 0 else ""
    turns: list[tuple[str, str | None]] = []
    for speaker, text in lines[: max(last_user, 0)]:
        if speaker == _ASSISTANT:
            if turns and turns[-1][1] is None:
                turns[-1] = (turns[-1][0], text)
            else:
                turns.append(("", text))
        else:
            turns.append((text, None))
    older = turns[:-RECENT_TURNS] if len(turns) > RECENT_TURNS else []
    summary = " ".join(user for user, _ in older if user)
    return message, tuple(turns[-RECENT_TURNS:]), summary


def _held(name: str, qid: int) -> bool:
    digest = hashlib.sha256(f"{name}:{qid}".encode()).digest()
    return digest[0] < 256 * HELD_BACK_SHARE


def load_madial(lang: str, data: Path = MADIAL) -> DevSet:
    owners: dict[str, int] = {}
    for row in _json_lines(data / "zh" / "MADial-Bench-zh-memory.json"):
        for key, value in row.items():
            owners[key] = int(value["user-id"])
    scopes: dict[int, list[tuple[int, str]]] = {}
    for row in _json_lines(data / lang / f"MADial-Bench-{lang}-memory.json"):
        for key, value in row.items():
            user = int(value.get("user-id", owners[key]))
            text = f"{value['event']} {value['scene']} {value['emotion']}"
            scopes.setdefault(user, []).append((int(key), text))
    name = f"madial-{lang}"
    asks: list[Ask] = []
    held: set[int] = set()
    for i, row in enumerate(_json_lines(data / lang / f"MADial-Bench-{lang}-dialogue.json")):
        user = int(row["user-id"])
        lines = _speaker_turns(row["dialogue"], int(row["test-turn"][0]))
        message, turns, summary = as_conversation(lines)
        asks.append(
            Ask(
                qid=i,
                scope=user,
                message=message,
                turns=turns,
                summary=summary,
                relevant=frozenset(int(r) for r in row["relevant-id"]),
                others=tuple(u for u in sorted(scopes) if u != user),
            )
        )
        if _held(name, i):
            held.add(i)
    return DevSet(name, scopes, asks, held)


def load_teacher() -> DevSet:
    data = recall_teacher_data.generate()
    scopes = {s.sid: [(r.rid, r.text) for r in s.runs] for s in data.scopes}
    held_scopes = {s.sid for s in data.scopes[-HELD_BACK_TEACHERS:]}
    asks = [
        Ask(
            qid=q.qid,
            scope=q.scope,
            message=q.message,
            turns=tuple(q.turns),
            summary="",
            relevant=q.relevant,
            others=(data.other[q.qid],) if q.qid in data.other else (),
            kind=q.kind,
        )
        for q in data.questions
    ]
    held = {q.qid for q in data.questions if q.scope in held_scopes}
    return DevSet("teacher", scopes, asks, held)


def load_all() -> dict[str, DevSet]:
    return {
        "madial-zh": load_madial("zh"),
        "madial-en": load_madial("en"),
        "teacher": load_teacher(),
    }
