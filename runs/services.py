"""The run engine: start a run, give it its context, call the provider, finish it.

The run row exists as ``running`` before the provider is called; the provider call
happens outside any transaction; finishing the run and enqueueing its memory job happen
in one short transaction.

Three things are called "context" around a run; they are different:

- ``Run.context``: the request's options as the API names them (``mode``, ``run_id``),
  parsed here into :class:`RunOptions`;
- ``memory.services.context.context_assemble``: the read path that builds what the run
  is given from memory;
- ``memory.models.RunContext``: the record of what it was given (messages, injected
  text, manifest), served at ``/api/runs/{id}/context``.

The tool loop (chat runs only; memory jobs never get tools): when the provider supports
tool calling, the run offers the tools of ``runs.tools.registry`` (``kb_search``). Each
tool call the model asks for is executed (:func:`runs.tools.tool_call_run`, which turns
every failure into a result the model reads) and its result sent back; after
``RUN_TOOL_CALLS_MAX`` calls (at most 3) the tools stay declared but the model is asked
to answer in text (``tool_choice: none``). Every provider call's tokens are charged to the
run; every executed call is recorded on the run (``Run.tool_calls``) and in its context
record (``manifest.tools``, and the tool messages among ``messages``). Sync and streamed
runs share the loop; a stream yields a :class:`ToolUsed` event per executed call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Agent, Run
from agents.modes import MODE_PROMPTS
from agents.providers.base import (
    ERROR_BAD_RESPONSE,
    ERROR_INTERNAL,
    Completion,
    Delta,
    LLMClient,
    Message,
    ProviderError,
    ToolChoice,
    ToolSpec,
)
from agents.providers.registry import client_for
from agents.rows import insert_instance, update_row
from agents.tokens import count_tokens
from agents.window import WindowOverflow, fit_window
from memory.durability import synchronous_commit
from memory.models import RunContext
from memory.scope import Scope
from memory.services.context import ContinueSource, context_assemble
from memory.services.jobs import after_run_enqueue
from memory.services.threads import ThreadRejected, thread_for_run
from runs import tools
from runs.tools import ToolCallRecord, ToolContext, ToolRegistry, records_json, tool_call_run

logger = logging.getLogger(__name__)

ERROR_CONTEXT_TOO_LARGE = "context_too_large"
ERROR_INTERRUPTED = "run_interrupted"
ERROR_STALE = "run_stale"
# The model kept asking for tools after its last allowed call and gave no text.
ERROR_TOOL_LIMIT = "tool_limit_exceeded"

# Tokens kept free in the window for the framing of tool messages (role tags, ids).
_TOOL_FRAMING_TOKENS = 64
# A token is rarely longer than this many characters (memory.render makes the same
# assumption): a result of N tokens takes at most N x this of the window's character cap.
_CHARS_PER_TOKEN_BOUND = 8


def error_message(code: str) -> str:
    """The user-facing sentence for an error code. Never contains provider details."""
    messages = {
        "provider_unreachable": _("模型服务暂时无法连接，请稍后重试。"),
        "provider_timeout": _("模型响应超时，请稍后重试。"),
        "provider_http_error": _("模型服务返回了错误，请稍后重试。"),
        "provider_auth_error": _("模型服务的认证配置有误，请联系管理员。"),
        "provider_bad_response": _("模型返回的内容无法解析，请稍后重试。"),
        ERROR_CONTEXT_TOO_LARGE: _("本轮内容过长，超出了模型的处理上限。"),
        ERROR_INTERRUPTED: _("这一轮在完成前被中断了，请重试。"),
        ERROR_STALE: _("这一轮长时间没有完成，已被标记为失败，请重试。"),
        ERROR_TOOL_LIMIT: _("模型多次调用工具仍未给出回答，请换个说法重试。"),
    }
    return str(messages.get(code, _("服务内部错误，请稍后重试。")))


class RunRejected(ValueError):
    """The request cannot start a run; ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class RunOptions:
    """A request's options (``Run.context``), validated, with the continue source read."""

    mode: str
    continue_from: ContinueSource | None


@dataclass(frozen=True, slots=True)
class StartedRun:
    """A run created as ``running``, and its options as read when it was started."""

    run: Run
    options: RunOptions


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """What the first provider call is sent, and the tools it is offered."""

    messages: list[Message]
    tokens: int
    chars: int
    tools: tuple[ToolSpec, ...] = ()
    manifest: dict[str, Any] = field(default_factory=dict)


@dataclass
class Exchange:
    """A run's conversation with its provider so far: every provider call's tokens, the
    assistant's texts, the messages the next call is sent, the executed tool calls.

    Kept outside the loop so that a run failing mid-way still settles with what it
    spent and the calls it made.
    """

    messages: list[Message]
    tokens: int
    chars: int
    input_tokens: int = 0
    output_tokens: int = 0
    texts: list[str] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(self.texts)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.tokens += _message_tokens(message)
        self.chars += len(message.content) + sum(len(c.arguments) for c in message.tool_calls)


# -- events of a streamed run -----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Started:
    run: Run


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUsed:
    """A tool call the run executed (streamed as an SSE ``tool`` event)."""

    record: ToolCallRecord


@dataclass(frozen=True, slots=True)
class Finished:
    run: Run


RunEvent = Started | TextDelta | ToolUsed | Finished


def run_options_parse(*, agent: Agent, owner_id: int, context: dict[str, Any]) -> RunOptions:
    """Validate the request options. Raises :class:`RunRejected`.

    The continue source (``run_id``: an earlier completed run of the same teacher and
    agent) is read here, once, before the new run exists: its text is what the run
    continues from even if the source is deleted meanwhile.
    """
    mode = context.get("mode")
    if mode is not None and (not isinstance(mode, str) or mode not in MODE_PROMPTS):
        raise RunRejected("context.mode", _("不支持的模式。可选：%s") % ", ".join(MODE_PROMPTS))
    continue_id = context.get("run_id")
    if continue_id is None:
        return RunOptions(mode=mode or "", continue_from=None)
    if isinstance(continue_id, bool) or not isinstance(continue_id, int | str):
        raise RunRejected("context.run_id", _("run_id 必须是整数。"))
    try:
        continue_pk = int(continue_id)
    except ValueError as exc:
        raise RunRejected("context.run_id", _("run_id 必须是整数。")) from exc
    source = (
        Run.objects.filter(
            pk=continue_pk,
            tenant_id=agent.tenant_id,
            agent_id=agent.pk,
            owner_id=owner_id,
            status=Run.Status.COMPLETED,
            deleted_at__isnull=True,
        )
        .values_list("pk", "output")
        .first()
    )
    if source is None:
        raise RunRejected("context.run_id", _("找不到可继续的已完成运行。"))
    return RunOptions(
        mode=mode or "", continue_from=ContinueSource(run_id=source[0], output=source[1])
    )


def run_start(
    *,
    agent: Agent,
    owner_id: int,
    user_input: str,
    context: dict[str, Any] | None = None,
    thread_id: str | None = None,
) -> StartedRun:
    """Create the run as ``running`` inside its thread.

    Raises :class:`RunRejected` (bad options, a continue source that is not there, a
    thread that is not the teacher's) before anything is stored.
    """
    context = dict(context or {})
    options = run_options_parse(agent=agent, owner_id=owner_id, context=context)
    scope = Scope.for_agent(agent, owner_id=owner_id)
    now = timezone.now()
    try:
        with transaction.atomic():
            # Flushed to disk by the run's finishing commit (memory/durability.py).
            synchronous_commit(wait=False)
            thread = thread_for_run(scope=scope, thread_id=thread_id, first_input=user_input)
            # One INSERT without the ORM's compiler (agents/rows.py), as the run's other
            # per-request statements.
            run = Run(
                tenant_id=agent.tenant_id,
                agent=agent,
                owner_id=owner_id,
                thread=thread,
                input=user_input,
                context=context,
                status=Run.Status.RUNNING,
                provider_name=agent.provider.name,
                created_at=now,
                started_at=now,
            )
            insert_instance(run)
    except ThreadRejected as exc:
        raise RunRejected("thread_id", str(exc)) from exc
    return StartedRun(run=run, options=options)


def run_prepare(*, started: StartedRun, tools_offered: Sequence[ToolSpec] = ()) -> PreparedRun:
    """Assemble the context, cap the window and record what the run is given.

    ``tools_offered`` are the tools the run will offer: the system message says their results
    are data, and the manifest lists them (``manifest.tools``; calls are added when the
    run settles).
    """
    run, options = started.run, started.options
    agent = run.agent
    began = time.perf_counter()
    assembled = context_assemble(
        scope=Scope.of(run),
        thread=run.thread,
        run_id=run.pk,
        user_input=run.input,
        agent_system_prompt=agent.system_prompt,
        mode_prompt=MODE_PROMPTS.get(options.mode, ""),
        continue_from=options.continue_from,
    )
    tool_specs = tuple(tools_offered)
    system_prompt = assembled.system_prompt
    if note := tools.tools_note(tool_specs):
        system_prompt = f"{system_prompt}\n\n{note}"
    messages = [
        Message(role="system", content=system_prompt),
        Message(role="user", content=assembled.user_message),
    ]
    window = fit_window(
        messages, max_tokens=settings.WINDOW_MAX_TOKENS, max_chars=settings.WINDOW_MAX_CHARS
    )
    manifest = dict(assembled.manifest)
    manifest["window"] = {"tokens": window.tokens, "chars": window.chars, "dropped": window.dropped}
    manifest["tools"] = {
        "offered": [spec.name for spec in tool_specs],
        "max_calls": settings.RUN_TOOL_CALLS_MAX if tool_specs else 0,
        "calls": [],
    }
    # How long the read path took (context assembly and the window), for operators and
    # the load test's context-assembly share (benchmarks/load.py).
    manifest["prepare_ms"] = round((time.perf_counter() - began) * 1000, 2)
    # Once per run (run_execute and run_stream prepare a run once): an INSERT, where
    # update_or_create took a SELECT and a savepoint more; its commit does not wait for
    # the disk: the run's finishing commit flushes it (memory/durability.py).
    with transaction.atomic():
        synchronous_commit(wait=False)
        record = RunContext(
            run=run,
            messages=[message_json(m) for m in window.messages],
            injected_text=assembled.injected_text,
            manifest=manifest,
        )
        insert_instance(record)
    return PreparedRun(
        messages=window.messages,
        tokens=window.tokens,
        chars=window.chars,
        tools=tool_specs,
        manifest=manifest,
    )


def message_json(message: Message) -> dict[str, Any]:
    """A message as the context record stores it (tool calls and their answers too)."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.tool_call_id:
        data["tool_call_id"] = message.tool_call_id
    return data


def _message_tokens(message: Message) -> int:
    return count_tokens(message.content) + sum(
        count_tokens(c.name) + count_tokens(c.arguments) for c in message.tool_calls
    )


def run_finish(
    *,
    run: Run,
    completion: Completion | None = None,
    error_code: str = "",
    exchange: Exchange | None = None,
    prepared: PreparedRun | None = None,
) -> Run:
    """Settle the run and enqueue its memory job, in one transaction.

    ``exchange`` (the tool loop's state) brings the tool calls made and, for a failed
    run, the tokens spent before the failure; with ``prepared`` the context record gets
    the tool exchange (its messages and ``manifest.tools.calls``).
    """
    now = timezone.now()
    provider = run.agent.provider
    records = records_json(exchange.records) if exchange is not None else []
    if completion is not None:
        run.status = Run.Status.COMPLETED
        run.output = completion.text
        run.input_tokens = completion.input_tokens
        run.output_tokens = completion.output_tokens
        run.error_code = ""
    else:
        run.status = Run.Status.FAILED
        run.error_code = error_code or ERROR_INTERNAL
        # Partial streamed text is not kept: a failed run is never shown or injected
        # as if it had an answer (design v2 §2.2, review #8). What the calls before the
        # failure cost is still charged.
        run.output = ""
        run.input_tokens = exchange.input_tokens if exchange is not None else 0
        run.output_tokens = exchange.output_tokens if exchange is not None else 0
    run.cost = provider.cost_of(input_tokens=run.input_tokens, output_tokens=run.output_tokens)
    run.tool_calls = records
    run.finished_at = now
    run.memory_state = Run.MemoryState.PENDING
    # The durable point of a run: its answer, and the start and context before it, are
    # on disk when the teacher sees it (memory/durability.py). A session setting, said
    # once per connection (before the transaction, so that it is remembered), which
    # every later finishing commit on the connection keeps.
    synchronous_commit(wait=True, session=True)
    with transaction.atomic():
        settled = {
            "status": run.status,
            "output": run.output,
            "error_code": run.error_code,
            "input_tokens": run.input_tokens,
            "output_tokens": run.output_tokens,
            "cost": run.cost,
            "tool_calls": records,
            "finished_at": now,
            "memory_state": Run.MemoryState.PENDING,
            "memory_enqueued_at": now,
        }
        # Plain SQL (agents/rows.py): every run request settles its run here.
        updated = update_row(
            Run, run.pk, settled, where={"status": Run.Status.RUNNING, "deleted_at": None}
        )
        if updated:
            if exchange is not None and prepared is not None and exchange.records:
                _context_record_tools(run=run, exchange=exchange, prepared=prepared)
            after_run_enqueue(run_id=run.pk)
    if not updated:
        if completion is not None:
            # Deleted while the provider answered (memory.services.forget): the text is
            # not kept, the cost is, so that cost history still adds up.
            Run.objects.filter(pk=run.pk, deleted_at__isnull=False, input_tokens=0).update(
                input_tokens=run.input_tokens, output_tokens=run.output_tokens, cost=run.cost
            )
        # Someone else (the sweeper, a deletion) settled it first; theirs stands.
        run.refresh_from_db()
    return run


def _context_record_tools(*, run: Run, exchange: Exchange, prepared: PreparedRun) -> None:
    """Add the tool exchange to what the run was given (one UPDATE, only when a tool
    was called): the messages of its last call (the first call's, then every call and
    result), and the calls in the manifest."""
    manifest = dict(prepared.manifest)
    manifest["tools"] = {**manifest.get("tools", {}), "calls": records_json(exchange.records)}
    RunContext.objects.filter(run_id=run.pk).update(
        messages=[message_json(m) for m in exchange.messages], manifest=manifest
    )


class _ToolLimitExceeded(Exception):
    """The model asked for tools after its last allowed call and said nothing else."""


def _offered_tools(client: LLMClient, registry: ToolRegistry) -> tuple[ToolSpec, ...]:
    if not client.supports_tools or settings.RUN_TOOL_CALLS_MAX <= 0:
        return ()
    return registry.specs()


def _provider_call(
    *,
    client: LLMClient,
    exchange: Exchange,
    tools_offered: tuple[ToolSpec, ...],
    may_call: bool,
    stream: bool,
) -> Generator[TextDelta, None, Completion]:
    """One provider call of the loop; a stream's text pieces are yielded as they come.

    A later call's text follows the earlier ones' after a blank line, in the stream as
    in the run's output, so that what the teacher saw streamed is the output.
    """
    choice: ToolChoice = "auto" if may_call else "none"
    messages = list(exchange.messages)
    completion: Completion | None = None
    if not stream:
        completion = client.complete(
            messages, purpose="chat", tools=tools_offered, tool_choice=choice
        )
    else:
        separate = bool(exchange.texts)
        for event in client.stream(
            messages, purpose="chat", tools=tools_offered, tool_choice=choice
        ):
            if isinstance(event, Delta):
                if not event.text:
                    continue
                if separate:
                    separate = False
                    yield TextDelta(text="\n\n")
                yield TextDelta(text=event.text)
            else:
                completion = event
    if completion is None:
        raise ProviderError(ERROR_BAD_RESPONSE, f"{client.name}: the stream ended without a result")
    exchange.input_tokens += completion.input_tokens
    exchange.output_tokens += completion.output_tokens
    if completion.text:
        exchange.texts.append(completion.text)
    return completion


def _tool_budget(exchange: Exchange) -> int:
    """Tokens the next tool result may take: its cap, within what the window has left."""
    room_tokens = settings.WINDOW_MAX_TOKENS - exchange.tokens - _TOOL_FRAMING_TOKENS
    room_chars = settings.WINDOW_MAX_CHARS - exchange.chars
    return max(
        0,
        min(
            settings.RUN_TOOL_RESULT_MAX_TOKENS,
            room_tokens,
            room_chars // _CHARS_PER_TOKEN_BOUND,
        ),
    )


def _converse(
    *,
    run: Run,
    client: LLMClient,
    prepared: PreparedRun,
    exchange: Exchange,
    registry: ToolRegistry,
    stream: bool,
) -> Generator[TextDelta | ToolUsed, None, Completion]:
    """The bounded tool loop; returns the final answer with every call's tokens summed.

    Terminates: every round either returns or executes at least one call, and at most
    ``RUN_TOOL_CALLS_MAX`` calls are executed. Calls beyond the bound (several asked in
    one round) are answered "limit reached" without running. Raises ``ProviderError``
    and :class:`_ToolLimitExceeded`.
    """
    max_calls = settings.RUN_TOOL_CALLS_MAX
    offered = prepared.tools
    scope = Scope.of(run)
    while True:
        may_call = bool(offered) and len(exchange.records) < max_calls
        completion = yield from _provider_call(
            client=client,
            exchange=exchange,
            tools_offered=offered,
            may_call=may_call,
            stream=stream,
        )
        if completion.tool_calls and offered and not may_call and not completion.text:
            # The endpoint ignored tool_choice "none" and gave nothing else to show.
            raise _ToolLimitExceeded
        if not completion.tool_calls or not may_call:
            # Tool calls nobody offered (or past the bound) are not run: the text stands.
            return Completion(
                text=exchange.text,
                input_tokens=exchange.input_tokens,
                output_tokens=exchange.output_tokens,
                finish_reason=completion.finish_reason,
            )
        exchange.add(
            Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls)
        )
        for call in completion.tool_calls:
            if len(exchange.records) >= max_calls:
                text = _("工具调用次数已达本轮上限，这次调用没有执行。请根据已有信息直接回答。")
            else:
                context = ToolContext(scope=scope, run_id=run.pk, budget=_tool_budget(exchange))
                result, record = tool_call_run(registry=registry, call=call, context=context)
                exchange.records.append(record)
                yield ToolUsed(record=record)
                text = result.text
            exchange.add(Message(role="tool", content=text, tool_call_id=call.id))


def _client(run: Run) -> LLMClient | None:
    try:
        return client_for(run.agent.provider)
    except ValueError:
        # A provider row the client refuses (a bad base URL): the run fails, not the request.
        logger.exception("run %s: provider %s is misconfigured", run.pk, run.agent.provider_id)
        return None


def run_execute(*, started: StartedRun, registry: ToolRegistry | None = None) -> Run:
    """Run to completion synchronously. Provider failures end as a failed run.

    ``registry``: the tools offered (default ``runs.tools.registry``).
    """
    return _drain(_run(started=started, registry=registry, stream=False))


def run_stream(*, started: StartedRun, registry: ToolRegistry | None = None) -> Iterator[RunEvent]:
    """Run while yielding events. If the consumer goes away, the run ends as failed."""
    run = started.run
    try:
        yield Started(run=run)
    except GeneratorExit:
        run_finish(run=run, error_code=ERROR_INTERRUPTED)
        raise
    settled = yield from _run(started=started, registry=registry, stream=True)
    yield Finished(run=settled)


def _drain(loop: Generator[TextDelta | ToolUsed, None, Run]) -> Run:
    """Run a loop that nobody watches to its result."""
    while True:
        try:
            next(loop)
        except StopIteration as stop:
            result: Run = stop.value
            return result


def _run(
    *, started: StartedRun, registry: ToolRegistry | None, stream: bool
) -> Generator[TextDelta | ToolUsed, None, Run]:
    """Prepare, converse (the tool loop), settle: the run engine's one body.

    Whatever happens, the run is settled: a provider failure, a crash or the loop being
    closed (a streamed run whose client went away) end it as failed, with the tokens
    spent and the tool calls made so far.
    """
    run = started.run
    exchange: Exchange | None = None
    prepared: PreparedRun | None = None
    settled = False
    try:
        client = _client(run)
        if client is None:
            settled = True
            return run_finish(run=run, error_code=ERROR_INTERNAL)
        registry = tools.registry if registry is None else registry
        try:
            prepared = run_prepare(started=started, tools_offered=_offered_tools(client, registry))
        except WindowOverflow:
            settled = True
            return run_finish(run=run, error_code=ERROR_CONTEXT_TOO_LARGE)
        exchange = Exchange(
            messages=list(prepared.messages), tokens=prepared.tokens, chars=prepared.chars
        )
        completion: Completion | None = None
        error_code = ""
        try:
            completion = yield from _converse(
                run=run,
                client=client,
                prepared=prepared,
                exchange=exchange,
                registry=registry,
                stream=stream,
            )
        except ProviderError as exc:
            logger.warning("run %s failed: %s", run.pk, exc.code)
            error_code = exc.code
        except _ToolLimitExceeded:
            logger.warning("run %s: the model kept calling tools past the limit", run.pk)
            error_code = ERROR_TOOL_LIMIT
        except Exception:
            logger.exception("run %s crashed in the provider client or the tool loop", run.pk)
            error_code = ERROR_INTERNAL
        settled = True
        return run_finish(
            run=run,
            completion=completion,
            error_code=error_code,
            exchange=exchange,
            prepared=prepared,
        )
    finally:
        if not settled:
            # The stream's client disconnected (GeneratorExit) or the server is stopping.
            run_finish(run=run, error_code=ERROR_INTERRUPTED, exchange=exchange, prepared=prepared)
