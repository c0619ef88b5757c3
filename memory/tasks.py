"""django-q2 task entry points: take ids, call one service, return a small dict."""

from __future__ import annotations

from memory.durability import synchronous_commit
from memory.services.compression import thread_compress
from memory.services.forget import memory_job_process
from memory.services.jobs import after_run_process
from memory.services.kb_documents import kb_document_process
from memory.services.llm import MemoryDeferred


def after_run(run_id: int) -> dict[str, object]:
    synchronous_commit(wait=False, session=True)  # redone when lost (memory/durability.py)
    return after_run_process(run_id=run_id).as_dict()


def compress_thread(thread_id: str) -> dict[str, object]:
    synchronous_commit(wait=False, session=True)
    try:
        result = thread_compress(thread_id=thread_id)
    except MemoryDeferred as exc:
        return {"thread_id": thread_id, "deferred": exc.code}
    return {"thread_id": thread_id, "folded": list(result.folded_run_ids), "calls": result.calls}


def governance_job(job_id: int) -> dict[str, object]:
    return memory_job_process(job_id=job_id).as_dict()


def kb_process(document_id: int) -> dict[str, object]:
    return kb_document_process(document_id=document_id).as_dict()
