"""Development sets for episodic recall, in one shape: scopes of entries and questions.

Used by ``benchmarks/recall_eval.py``. Each question carries what the product's query
builder takes (the message, the thread's recent turns, a summary), its relevant entries
(empty: no relevant past run) and the other people's scopes it is also asked against.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_people_data
import recall_teacher_data

from memory.recall import entry_text
from tests.devdata import dev_data

MADIAL = dev_data() / "recall-dev" / "madial"
#: A git mirror of MemoryBank-SiliconFriend (MIT); read in place, never copied here.
MEMORYBANK_MIRROR = Path(
    os.environ.get(
        "AGENT_MEMORY_MEMORYBANK", "/work/.mirror/zhongwanjun+MemoryBank-SiliconFriend/repo"
    )
)
#: Our relevance labels for its probing questions (the rule is in the file).
MEMORYBANK_LABELS = Path(__file__).resolve().parent / "data" / "memorybank_relevance.json"
#: Every third MemoryBank user (positions 2, 5, 8, ...) is held back from fitting.
HELD_BACK_EVERY = 3
#: Turns the product keeps verbatim in a thread (settings.THREAD_RECENT_TURNS).
RECENT_TURNS = 2
#: Share of MADial dialogues held back from fitting (chosen by a hash of the number).
HELD_BACK_SHARE = 0.3
#: Teachers held back from fitting.
HELD_BACK_TEACHERS = 10
#: Pairs of the generated people set held back from fitting.
HELD_BACK_PAIRS = 5

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


def load_people() -> DevSet:
    """The generated English multi-session chat set (``benchmarks/recall_people_data.py``):
    one scope per pair of friends, one entry per turn with its reply."""
    data = recall_people_data.generate()
    scopes = {
        p.sid: [(t.tid, entry_text(user_input=t.text, output=t.reply)) for t in p.turns]
        for p in data.pairs
    }
    held_scopes = {p.sid for p in data.pairs[-HELD_BACK_PAIRS:]}
    asks = [
        Ask(
            qid=q.qid,
            scope=q.scope,
            message=q.message,
            turns=(),
            summary="",
            relevant=q.relevant,
            others=(data.other[q.qid],) if q.qid in data.other else (),
            kind=q.kind,
        )
        for q in data.questions
    ]
    held = {q.qid for q in data.questions if q.scope in held_scopes}
    return DevSet("people-en", scopes, asks, held)


def _mirror_file(path: str) -> str:
    """A file of the MemoryBank mirror (a bare git directory, or a checkout)."""
    checkout = MEMORYBANK_MIRROR / path
    if checkout.is_file():
        return checkout.read_text(encoding="utf-8")
    return subprocess.run(
        ["git", "-C", str(MEMORYBANK_MIRROR), "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
        text=True,
        encoding="utf-8",
    ).stdout


def memorybank_missing() -> str | None:
    """Why the MemoryBank sets cannot be loaded here, or None."""
    if not MEMORYBANK_MIRROR.exists():
        return (
            f"no MemoryBank-SiliconFriend mirror at {MEMORYBANK_MIRROR} (AGENT_MEMORY_MEMORYBANK)"
        )
    return None


def load_memorybank(lang: str) -> DevSet:
    """MemoryBank-SiliconFriend (``en`` or ``cn``): one scope per user, one entry per turn
    (the user's message and the companion's reply, as :func:`entry_text` stores a run),
    one question per probing question, asked alone (it opens a new thread). Relevance:
    our labels (``benchmarks/data/memorybank_relevance.json``). False injection: each
    question is also asked against every other user's memory."""
    histories = {
        name.strip(): value["history"]
        for name, value in json.loads(
            _mirror_file(f"eval_data/{lang}/memory_bank_{lang}.json")
        ).items()
    }
    probing = [
        (name.strip(), questions)
        for line in _mirror_file(f"eval_data/{lang}/probing_questions_{lang}.jsonl").splitlines()
        if line.strip()
        for name, questions in json.loads(line).items()
    ]
    labels = json.loads(MEMORYBANK_LABELS.read_text(encoding="utf-8"))["labels"][lang]
    users = [name for name, _ in probing]
    scopes: dict[int, list[tuple[int, str]]] = {}
    turn_ids: dict[tuple[int, str], int] = {}
    for uid, name in enumerate(users):
        entries = scopes.setdefault(uid, [])
        for day in sorted(histories[name]):
            for position, turn in enumerate(histories[name][day]):
                eid = 1000 * uid + len(entries)
                turn_ids[uid, f"{day}#{position}"] = eid
                entries.append(
                    (eid, entry_text(user_input=turn["query"], output=turn["response"] or ""))
                )
    asks: list[Ask] = []
    held: set[int] = set()
    for uid, (name, questions) in enumerate(probing):
        for number, question in enumerate(questions):
            qid = 100 * uid + number
            relevant = frozenset(turn_ids[uid, label] for label in labels[name][number])
            asks.append(
                Ask(
                    qid=qid,
                    scope=uid,
                    message=question.strip().strip('"'),
                    turns=(),
                    summary="",
                    relevant=relevant,
                    others=tuple(u for u in scopes if u != uid),
                )
            )
            if uid % HELD_BACK_EVERY == HELD_BACK_EVERY - 1:
                held.add(qid)
    return DevSet(f"memorybank-{lang}", scopes, asks, held)


def load_all() -> dict[str, DevSet]:
    sets = {
        "madial-zh": load_madial("zh"),
        "madial-en": load_madial("en"),
        "teacher": load_teacher(),
        "people-en": load_people(),
    }
    missing = memorybank_missing()
    if missing is None:
        sets["memorybank-en"] = load_memorybank("en")
        sets["memorybank-cn"] = load_memorybank("cn")
    else:
        print(f"memorybank-en, memorybank-cn: not measured ({missing})")
    return sets
