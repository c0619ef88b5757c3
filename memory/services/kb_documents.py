"""Knowledge-base documents: upload, background processing, deletion, artifacts.

The write path of L4. An upload is checked cheaply in the request (size, type, an empty
or plainly broken file) and stored with its raw bytes as a ``processing`` document; its
processing job is enqueued in the same transaction (``memory.services.queue``), so a
document row never exists without its job. The worker (:func:`kb_document_process`)
parses and chunks it outside any transaction, red-line redacts every chunk (audit
counts by category), then in one short transaction stores the chunks with their terms,
bumps the index version and marks the document ``ready`` -- or ``failed`` with a
message for the teacher. Processing is idempotent (claimed by a conditional update,
finished only while the document is still ``processing``), and the sweeper re-enqueues
a document whose job was lost (:func:`kb_documents_sweep`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Max, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Agent, Run
from memory.kb.chunking import Chunk, chunk_blocks
from memory.kb.parse import (
    FileKind,
    Parsed,
    ParseError,
    ParseFailure,
    kind_for_filename,
    precheck,
    text_blocks,
)
from memory.kb.parse import parse as parse_file
from memory.models import KBChunk, KBDocument, KBIndexState, KBSource, RedlineAudit
from memory.recall import terms
from memory.redline import redact
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.services.kb import IndexKey, PreparedLine, kb_lines_prepare
from memory.services.queue import enqueue

TITLE_MAX_CHARS = 200
TASK_KB_PROCESS = "memory.tasks.kb_process"


class KBRejected(ValueError):
    """An upload the knowledge base refuses; ``status`` is the HTTP status it means."""

    def __init__(self, message: str, *, status: int = 400, field: str = "file") -> None:
        super().__init__(message)
        self.status = status
        self.field = field


def parse_failure_message(code: ParseFailure) -> str:
    """What the teacher is told when a file cannot be read."""
    messages = {
        ParseFailure.EMPTY: _("文件是空的，没有可以读取的文字。"),
        ParseFailure.ENCODING: _(
            "无法识别文件的文字编码。请另存为 UTF-8 编码的文本文件后重新上传。"
        ),
        ParseFailure.CORRUPT: _("文件已损坏，或内容与扩展名不符，无法读取。"),
        ParseFailure.ENCRYPTED: _("PDF 文件设置了密码，无法读取。请去掉密码后重新上传。"),
        ParseFailure.NO_TEXT: _(
            "PDF 中没有可提取的文字（可能是扫描图片）。请上传带文字层的 PDF 或 Word 文件。"
        ),
    }
    return str(messages[code])


def _size_label(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size // 1024} KB"


def _printable(text: str) -> str:
    """``text`` without control characters (a NUL would fail on PostgreSQL)."""
    return "".join(ch for ch in text if ch.isprintable() or ch == " ")


def _title_from(filename: str) -> str:
    stem = filename.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if "." in stem:
        stem = stem.rsplit(".", 1)[0]
    return " ".join(stem.split())[:TITLE_MAX_CHARS]


def kb_size_check(*, size: int) -> None:
    """:class:`KBRejected` (413) when an upload of ``size`` bytes is over the limit."""
    limit = settings.KB_UPLOAD_MAX_BYTES
    if size > limit:
        raise KBRejected(
            _("文件太大：最大 %(limit)s。") % {"limit": _size_label(limit)}, status=413
        )


def kb_upload_kind(*, filename: str, size: int) -> FileKind:
    """The kind of an uploaded file, or :class:`KBRejected` (413 too large, 415 type)."""
    kb_size_check(size=size)
    kind = kind_for_filename(filename)
    if kind is None:
        raise KBRejected(
            _("不支持这种文件类型。请上传 .txt、.md、.docx 或 .pdf 文件。"), status=415
        )
    return kind


def kb_document_create(
    *,
    agent: Agent,
    owner_id: int,
    visibility: str = KBDocument.Visibility.AGENT,
    title: str = "",
    filename: str = "",
    data: bytes | None = None,
    text: str | None = None,
) -> KBDocument:
    """A new ``processing`` document from a file (``filename`` + ``data``) or a text.

    Raises :class:`KBRejected`. Its processing job is enqueued in the same transaction.
    """
    if (data is None) == (text is None):
        raise ValueError("give a file or a text, not both")
    if visibility not in KBDocument.Visibility.values:
        raise KBRejected(_("可见范围无效。"), field="visibility")
    if text is not None:
        content = text.encode("utf-8")
        if len(content) > settings.KB_UPLOAD_MAX_BYTES:
            raise KBRejected(
                _("文本太长：最大 %(limit)s。")
                % {"limit": _size_label(settings.KB_UPLOAD_MAX_BYTES)},
                status=413,
                field="text",
            )
        if not text.strip():
            raise KBRejected(_("文本不能为空。"), field="text")
        kind = FileKind.TEXT
    else:
        assert data is not None
        content = data
        kind = kb_upload_kind(filename=filename, size=len(data))
        try:
            precheck(kind, data)
        except ParseError as exc:
            raise KBRejected(parse_failure_message(exc.code)) from exc
    filename = _printable(filename)
    title = " ".join(_printable(title).split())[:TITLE_MAX_CHARS] or _title_from(filename)
    if not title:
        raise KBRejected(_("请填写标题。"), field="title")
    now = timezone.now()
    with transaction.atomic():
        document = KBDocument.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            owner_id=owner_id,
            title=title,
            visibility=visibility,
            kind=str(kind),
            filename=filename[:255],
            size_bytes=len(content),
            enqueued_at=now,
            created_at=now,
            updated_at=now,
        )
        KBSource.objects.create(document=document, content=content)
        kb_document_enqueue(document_id=document.pk)
    return document


def kb_document_enqueue(*, document_id: int) -> None:
    """Enqueue a document's processing. Call inside the transaction that created it."""
    enqueue(TASK_KB_PROCESS, document_id, name=f"kb_process:{document_id}")


# -- processing (the worker) ----------------------------------------------------------------
HEADING_PATH_MAX_CHARS = 500  # KBChunk.heading_path


@dataclass(frozen=True, slots=True)
class PreparedChunk:
    heading_path: str
    text: str
    terms: str
    tokens: int
    line: PreparedLine  # the injected line (kb_line_prepare), under the document's title


@dataclass(frozen=True, slots=True)
class Prepared:
    """A parsed, chunked and redacted document, ready to be stored."""

    chunks: list[PreparedChunk]
    char_count: int
    encoding: str
    redactions: dict[str, int]


def kb_prepare(parsed: Parsed, *, title: str) -> Prepared:
    """Chunk and red-line redact a parsed document, with each chunk's injected line
    under ``title`` (pure CPU; no database, so no transaction waits on it). A title
    changed later only makes the read path render that line live (its stamp)."""
    redactions: dict[str, int] = {}
    texts: list[tuple[str, str]] = []  # (heading path, text), redacted
    found: list[tuple[str, int]] = []  # (terms, tokens)
    chunk: Chunk
    for chunk in chunk_blocks(parsed.blocks):
        body = redact(chunk.text)
        path = redact(chunk.heading_path)
        for counts in (body.counts, path.counts):
            for category, count in counts.items():
                redactions[str(category)] = redactions.get(str(category), 0) + count
        # The terms are the heading path's and the text's: a question naming the
        # chapter finds its paragraphs.
        chunk_terms = terms(f"{path.text}\n{body.text}")
        texts.append((path.text[:HEADING_PATH_MAX_CHARS], body.text))
        found.append((" ".join(chunk_terms), chunk.tokens))
    lines = kb_lines_prepare(title=title, passages=texts)
    return Prepared(
        chunks=[
            PreparedChunk(heading_path=path, text=text, terms=joined, tokens=tokens, line=line)
            for (path, text), (joined, tokens), line in zip(texts, found, lines, strict=True)
        ],
        char_count=parsed.char_count,
        encoding=parsed.encoding,
        redactions=redactions,
    )


def _parse_source(document: KBDocument, content: bytes) -> Parsed:
    kind = FileKind(document.kind)
    if kind is FileKind.TEXT:
        # Pasted text is read as Markdown: headings a teacher typed with # count.
        blocks = text_blocks(content.decode("utf-8"), markdown=True)
        if not blocks:
            raise ParseError(ParseFailure.EMPTY)
        return Parsed(blocks=blocks, encoding="utf-8")
    return parse_file(kind, content)


def _bump_index(key: IndexKey, *, delta: int) -> None:
    """Bump the index's version (and its live chunk count) in the caller's transaction.

    Called before the chunks are written: the row lock it takes orders concurrent
    writers of one index, so their chunk ids commit in id order.
    """
    updated = KBIndexState.objects.filter(key.state_filter()).update(
        version=F("version") + 1, chunk_count=F("chunk_count") + delta
    )
    if updated:
        return
    try:
        with transaction.atomic():
            KBIndexState.objects.create(
                tenant_id=key.tenant_id,
                agent_id=key.agent_id,
                owner_id=key.owner_id,
                version=1,
                chunk_count=delta,
            )
    except IntegrityError:
        _bump_index(key, delta=delta)  # created concurrently; bump it


# The chunk columns in the order they are written (``_insert_chunks``).
_CHUNK_FIELDS = (
    "document",
    "tenant",
    "agent",
    "index_owner",
    "position",
    "heading_path",
    "text",
    "terms",
    "tokens",
    "line",
    "line_tokens",
    "line_cut",
    "line_stamp",
)


# A chunk row's values, in :data:`_CHUNK_FIELDS` order.
_ChunkValues = tuple[int | str | bool | None, ...]


def _insert_chunks(document_id: int, rows: list[_ChunkValues]) -> int:
    """Insert chunk ``rows`` (values in :data:`_CHUNK_FIELDS` order) of one document;
    returns the largest id written.

    On PostgreSQL by ``COPY`` (a 2 MB document's chunks in about half the time of a
    multi-row ``INSERT``, ``benchmarks/kb.py``), elsewhere by one prepared ``INSERT``
    executed per row (``executemany``; on SQLite a quarter of ``bulk_create``'s time,
    which compiles every value of every row into its SQL: the 1,909 chunks of a 2 MB
    document in about 60 ms against 230). The values are plain strings, integers and
    booleans, stored as they are. Ids come from the table's sequence either way, after
    the index's row lock (``_bump_index``).
    """
    fields = {field.name: field for field in KBChunk._meta.concrete_fields}
    quote = connection.ops.quote_name
    table = quote(KBChunk._meta.db_table)
    columns = ", ".join(quote(str(fields[name].column)) for name in _CHUNK_FIELDS)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(_CHUNK_FIELDS))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
    top = KBChunk.objects.filter(document_id=document_id).aggregate(top=Max("pk"))["top"]
    return top or 0


def _store_chunks(document: KBDocument, prepared: Prepared) -> None:
    """Write the chunks and mark the document ready. Call inside a transaction."""
    key = IndexKey.for_document(document)
    _bump_index(key, delta=len(prepared.chunks))
    top = _insert_chunks(
        document.pk,
        [
            (
                document.pk,
                document.tenant_id,
                document.agent_id,
                key.owner_id,
                position,
                chunk.heading_path,
                chunk.text,
                chunk.terms,
                chunk.tokens,
                chunk.line.text,
                chunk.line.tokens,
                chunk.line.cut,
                chunk.line.stamp,
            )
            for position, chunk in enumerate(prepared.chunks)
        ],
    )
    KBIndexState.objects.filter(key.state_filter()).update(
        max_chunk_id=Greatest(F("max_chunk_id"), top)
    )
    now = timezone.now()
    KBDocument.objects.filter(pk=document.pk).update(
        status=KBDocument.Status.READY,
        error="",
        chunk_count=len(prepared.chunks),
        char_count=prepared.char_count,
        encoding=prepared.encoding,
        processed_at=now,
        updated_at=now,
    )


@dataclass(frozen=True, slots=True)
class ProcessReport:
    document_id: int
    state: str  # ready | failed | skipped
    chunks: int = 0
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "document_id": self.document_id,
            "state": self.state,
            "chunks": self.chunks,
            "error": self.error,
        }


def _fail(document_id: int, message: str) -> ProcessReport:
    with transaction.atomic():
        updated = KBDocument.objects.filter(
            pk=document_id, status=KBDocument.Status.PROCESSING
        ).update(
            status=KBDocument.Status.FAILED,
            error=message[:300],
            processed_at=timezone.now(),
            updated_at=timezone.now(),
        )
        KBSource.objects.filter(document_id=document_id).delete()
    return ProcessReport(document_id, "failed" if updated else "skipped", error=message)


def kb_document_process(*, document_id: int) -> ProcessReport:
    """Parse, chunk, redact and index one document. Idempotent; safe to run twice at once."""
    claimed = KBDocument.objects.filter(pk=document_id, status=KBDocument.Status.PROCESSING).update(
        attempts=F("attempts") + 1
    )
    if not claimed:
        return ProcessReport(document_id, "skipped")
    document = KBDocument.objects.filter(pk=document_id).first()
    if document is None:  # deleted just now
        return ProcessReport(document_id, "skipped")
    content = KBSource.objects.filter(document_id=document_id).values_list("content", flat=True)
    raw = content.first()
    if raw is None:
        return _fail(document_id, _("原文件已丢失，请重新上传。"))
    try:
        prepared = kb_prepare(_parse_source(document, bytes(raw)), title=document.title)
    except ParseError as exc:
        return _fail(document_id, parse_failure_message(exc.code))
    if not prepared.chunks:
        return _fail(document_id, parse_failure_message(ParseFailure.EMPTY))
    with transaction.atomic():
        # Finish only a document still processing (not deleted, not finished by a
        # concurrent delivery of the same job); the row lock orders the two.
        current = (
            KBDocument.objects.select_for_update()
            .filter(pk=document_id, status=KBDocument.Status.PROCESSING)
            .first()
        )
        if current is None:
            return ProcessReport(document_id, "skipped")
        _store_chunks(current, prepared)
        KBSource.objects.filter(document_id=document_id).delete()
    if prepared.redactions:
        redline_audit_record(
            scope=Scope.of(document), source=RedlineAudit.Source.KB, counts=prepared.redactions
        )
    return ProcessReport(document_id, "ready", chunks=len(prepared.chunks))


# -- deletion -------------------------------------------------------------------------------
def kb_document_delete(*, document: KBDocument) -> bool:
    """Delete a document and its chunks; every process's index drops them on its next
    search (the version bump). Idempotent: returns whether this call deleted it. Access
    is the caller's check (``memory.selectors.kb_document_get`` /
    ``kb_document_may_delete``)."""
    key = IndexKey.for_document(document)
    with transaction.atomic():
        chunks = KBChunk.objects.filter(document_id=document.pk).count()
        deleted, _counts = KBDocument.objects.filter(pk=document.pk).delete()
        if deleted and chunks:
            _bump_index(key, delta=-chunks)
    return bool(deleted)


# -- artifacts ------------------------------------------------------------------------------
def artifact_title(*, run: Run) -> str:
    """An archived artifact's title: the thread's title (or the request) and the date."""
    day = timezone.localtime(run.finished_at or run.created_at).date().isoformat()
    base = run.thread.title if run.thread is not None and run.thread.title else run.input
    base = " ".join(base.split())[: TITLE_MAX_CHARS - 20]
    return f"{base}（{day}）"


def kb_artifact_archive(*, run: Run) -> KBDocument | None:
    """Store a completed run's output as its owner's private document, ready at once.

    Idempotent per run (one document per ``source_run``). Called by the memory job's
    archive step; nothing here calls a model.
    """
    if run.status != Run.Status.COMPLETED or not run.output.strip():
        return None
    existing = KBDocument.objects.filter(source_run_id=run.pk).first()
    if existing is not None:
        return existing
    blocks = text_blocks(run.output, markdown=True)
    if not blocks:
        return None
    title = artifact_title(run=run)
    prepared = kb_prepare(Parsed(blocks=blocks, encoding="utf-8"), title=title)
    now = timezone.now()
    try:
        with transaction.atomic():
            # Locked and re-read: a deletion or a forgetting (memory.services.forget)
            # may have erased or redacted the run since it was read. Archived after
            # them, the artifact holds what the run holds now; archived before, their
            # cascade finds and deletes it.
            current = (
                Run.objects.select_for_update()
                .filter(pk=run.pk, deleted_at__isnull=True)
                .values_list("output", flat=True)
                .first()
            )
            if current is None or not current.strip():
                return None
            if current != run.output:
                fresh = text_blocks(current, markdown=True)
                if not fresh:
                    return None
                prepared = kb_prepare(Parsed(blocks=fresh, encoding="utf-8"), title=title)
            document = KBDocument.objects.create(
                tenant_id=run.tenant_id,
                agent_id=run.agent_id,
                owner_id=run.owner_id,
                title=title,
                visibility=KBDocument.Visibility.PRIVATE,
                kind=KBDocument.Kind.ARTIFACT,
                source_run=run,
                size_bytes=len(current.encode("utf-8")),
                created_at=now,
                updated_at=now,
            )
            _store_chunks(document, prepared)
    except IntegrityError:
        # Archived concurrently by a redelivered job: that one stands.
        return KBDocument.objects.filter(source_run_id=run.pk).first()
    if prepared.redactions:
        redline_audit_record(
            scope=Scope.of(run), source=RedlineAudit.Source.KB, counts=prepared.redactions
        )
    document.refresh_from_db()
    return document


# -- listing and recovery -------------------------------------------------------------------
def kb_documents_visible(*, scope: Scope) -> QuerySet[KBDocument]:
    """The documents ``scope``'s teacher sees with the agent, newest first."""
    return (
        KBDocument.objects.visible_to(**scope.filter_kwargs())
        .select_related("owner")
        .order_by("-created_at", "-pk")
    )


def kb_documents_sweep(*, now: datetime, stale_after: timedelta) -> int:
    """Re-enqueue documents whose processing job was lost; fail those that keep dying.

    Each re-enqueue is claimed by a compare-and-set on ``enqueued_at``, so two sweeps at
    once enqueue a document once.
    """
    cutoff = now - stale_after
    due = KBDocument.objects.filter(status=KBDocument.Status.PROCESSING).filter(
        Q(enqueued_at__lt=cutoff) | Q(enqueued_at__isnull=True)
    )
    count = 0
    for document_id, enqueued_at, attempts in due.values_list("pk", "enqueued_at", "attempts"):
        if attempts >= settings.MEMORY_JOB_MAX_ATTEMPTS:
            _fail(document_id, _("处理多次未能完成，请重新上传。"))
            continue
        with transaction.atomic():
            claim = KBDocument.objects.filter(pk=document_id, status=KBDocument.Status.PROCESSING)
            claim = (
                claim.filter(enqueued_at=enqueued_at)
                if enqueued_at
                else claim.filter(enqueued_at__isnull=True)
            )
            if claim.update(enqueued_at=now):
                kb_document_enqueue(document_id=document_id)
                count += 1
    return count
