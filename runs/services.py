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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Agent, Run
from agents.modes import MODE_PROMPTS
from agents.providers.base import (
    ERROR_INTERNAL,
    Completion,
    Delta,
    Message,
    ProviderError,
)
from agents.providers.registry import client_for
from agents.window import WindowOverflow, fit_window
from memory.durability import synchronous_commit
from memory.models import RunContext
from memory.scope import Scope
from memory.services.context import ContinueSource, context_assemble
from memory.services.jobs import after_run_enqueue
from memory.services.threads import ThreadRejected, thread_for_run

logger = logging.getLogger(__name__)

ERROR_CONTEXT_TOO_LARGE = "context_too_large"
ERROR_INTERRUPTED = "run_interrupted"
ERROR_STALE = "run_stale"


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
    messages: list[Message]


# -- events of a streamed run -----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Started:
    run: Run


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Finished:
    run: Run


RunEvent = Started | TextDelta | Finished


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
            run = Run.objects.create(
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
    except ThreadRejected as exc:
        raise RunRejected("thread_id", str(exc)) from exc
    return StartedRun(run=run, options=options)


def run_prepare(*, started: StartedRun) -> PreparedRun:
    """Assemble the context, cap the window and record what the run is given."""
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
    messages = [
        Message(role="system", content=assembled.system_prompt),
        Message(role="user", content=assembled.user_message),
    ]
    window = fit_window(
        messages, max_tokens=settings.WINDOW_MAX_TOKENS, max_chars=settings.WINDOW_MAX_CHARS
    )
    manifest = dict(assembled.manifest)
    manifest["window"] = {"tokens": window.tokens, "chars": window.chars, "dropped": window.dropped}
    # How long the read path took (context assembly and the window), for operators and
    # the load test's context-assembly share (benchmarks/load.py).
    manifest["prepare_ms"] = round((time.perf_counter() - began) * 1000, 2)
    # Once per run (run_execute and run_stream prepare a run once): an INSERT, where
    # update_or_create took a SELECT and a savepoint more; its commit does not wait for
    # the disk: the run's finishing commit flushes it (memory/durability.py).
    with transaction.atomic():
        synchronous_commit(wait=False)
        RunContext.objects.create(
            run=run,
            messages=[{"role": m.role, "content": m.content} for m in window.messages],
            injected_text=assembled.injected_text,
            manifest=manifest,
        )
    return PreparedRun(messages=window.messages)


def run_finish(*, run: Run, completion: Completion | None = None, error_code: str = "") -> Run:
    """Settle the run and enqueue its memory job, in one transaction."""
    now = timezone.now()
    provider = run.agent.provider
    if completion is not None:
        run.status = Run.Status.COMPLETED
        run.output = completion.text
        run.input_tokens = completion.input_tokens
        run.output_tokens = completion.output_tokens
        run.cost = provider.cost_of(
            input_tokens=completion.input_tokens, output_tokens=completion.output_tokens
        )
        run.error_code = ""
    else:
        run.status = Run.Status.FAILED
        run.error_code = error_code or ERROR_INTERNAL
        # Partial streamed text is not kept: a failed run is never shown or injected
        # as if it had an answer (design v2 §2.2, review #8).
        run.output = ""
    run.finished_at = now
    run.memory_state = Run.MemoryState.PENDING
    with transaction.atomic():
        # The durable point of a run: its answer, and the start and context before it,
        # are on disk when the teacher sees it (memory/durability.py).
        synchronous_commit(wait=True)
        updated = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            status=run.status,
            output=run.output,
            error_code=run.error_code,
            input_tokens=run.input_tokens,
            output_tokens=run.output_tokens,
            cost=run.cost,
            finished_at=now,
            memory_state=Run.MemoryState.PENDING,
            memory_enqueued_at=now,
        )
        if updated:
            after_run_enqueue(run_id=run.pk)
    if not updated:
        # Someone else (the sweeper) settled it first; theirs stands.
        run.refresh_from_db()
    return run


def run_execute(*, started: StartedRun) -> Run:
    """Run to completion synchronously. Provider failures end as a failed run."""
    run = started.run
    try:
        prepared = run_prepare(started=started)
    except WindowOverflow:
        return run_finish(run=run, error_code=ERROR_CONTEXT_TOO_LARGE)
    client = client_for(run.agent.provider)
    try:
        completion = client.complete(prepared.messages, purpose="chat")
    except ProviderError as exc:
        logger.warning("run %s failed: %s", run.pk, exc.code)
        return run_finish(run=run, error_code=exc.code)
    except Exception:
        logger.exception("run %s crashed in the provider client", run.pk)
        return run_finish(run=run, error_code=ERROR_INTERNAL)
    return run_finish(run=run, completion=completion)


def run_stream(*, started: StartedRun) -> Iterator[RunEvent]:
    """Run while yielding events. If the consumer goes away, the run ends as failed."""
    run = started.run
    finished = False
    try:
        yield Started(run=run)
        try:
            prepared = run_prepare(started=started)
        except WindowOverflow:
            finished = True
            yield Finished(run=run_finish(run=run, error_code=ERROR_CONTEXT_TOO_LARGE))
            return
        client = client_for(run.agent.provider)
        completion: Completion | None = None
        try:
            for event in client.stream(prepared.messages, purpose="chat"):
                if isinstance(event, Delta):
                    yield TextDelta(text=event.text)
                else:
                    completion = event
        except ProviderError as exc:
            logger.warning("run %s failed while streaming: %s", run.pk, exc.code)
            finished = True
            yield Finished(run=run_finish(run=run, error_code=exc.code))
            return
        except Exception:
            logger.exception("run %s crashed while streaming", run.pk)
            finished = True
            yield Finished(run=run_finish(run=run, error_code=ERROR_INTERNAL))
            return
        finished = True
        if completion is None:
            yield Finished(run=run_finish(run=run, error_code="provider_bad_response"))
        else:
            yield Finished(run=run_finish(run=run, completion=completion))
    finally:
        if not finished:
            # The client disconnected (GeneratorExit) or the server is stopping.
            run_finish(run=run, error_code=ERROR_INTERRUPTED)
