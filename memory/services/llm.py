"""LLM calls made by the memory itself: provider locality and the memory-op ledger.

Design v2 §2.4: memory jobs use the agent's own provider (or its explicit memory
provider). If that is unreachable they may fall back only to the configured *local*
provider; a conversation that was only ever sent to a local model is never sent to a
cloud one. With no usable fallback the job is deferred and retried later.
Every call, successful or not, is one MemoryOp row (design v2 §5), never run cost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agents.models import Agent, Provider
from agents.providers.base import Completion, Message, ProviderError, Purpose
from agents.providers.registry import client_for
from agents.rows import PlanCache, RowPlan, column, insert_instance, table
from memory import faults
from memory.models import MemoryOp

logger = logging.getLogger(__name__)


class MemoryDeferred(Exception):
    """No allowed provider could do the memory work now; retry later."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def memory_fallback_provider(*, exclude_id: int) -> Provider | None:
    """The configured local fallback (the model constraint keeps it local).

    Plain SQL (agents/rows.py): every memory job reads it, and compiling the ORM query
    cost more than running it. What it answers is
    ``Provider.objects.filter(is_memory_fallback=True, locality="local")
    .exclude(pk=exclude_id).first()``.
    """
    found = _FALLBACK_PLAN.get().fetch_one([True, Provider.Locality.LOCAL.value, exclude_id])
    return None if found is None else found[0]  # type: ignore[return-value]


def _fallback_plan() -> RowPlan:
    pk = column(Provider, "id")
    return RowPlan(
        f"SELECT {{columns}} FROM {table(Provider)} p "
        f"WHERE p.{column(Provider, 'is_memory_fallback')} = %s "
        f"AND p.{column(Provider, 'locality')} = %s AND p.{pk} <> %s ORDER BY p.{pk} LIMIT 1",
        [(Provider, "p")],
    )


_FALLBACK_PLAN = PlanCache(_fallback_plan)


def memory_providers(*, agent: Agent) -> tuple[Provider, ...]:
    """The providers a memory call of ``agent`` may use, in order: its memory provider,
    then the local fallback. A job reads them once and passes them to each of its calls."""
    primary = agent.effective_memory_provider
    fallback = memory_fallback_provider(exclude_id=primary.pk)
    return (primary,) if fallback is None else (primary, fallback)


def _record(
    *,
    agent: Agent,
    kind: str,
    provider: Provider,
    thread_id: str | None,
    run_id: int | None,
    completion: Completion | None,
    error_code: str = "",
) -> MemoryOp:
    input_tokens = completion.input_tokens if completion else 0
    output_tokens = completion.output_tokens if completion else 0
    # One INSERT without the ORM's compiler (agents/rows.py): a job records one or two.
    op = MemoryOp(
        tenant_id=agent.tenant_id,
        agent=agent,
        thread_id=thread_id,
        run_id=run_id,
        kind=kind,
        provider=provider,
        provider_name=provider.name,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=provider.cost_of(input_tokens=input_tokens, output_tokens=output_tokens),
        success=completion is not None,
        error_code=error_code,
    )
    insert_instance(op)
    return op


def memory_complete(
    *,
    agent: Agent,
    messages: list[Message],
    purpose: Purpose,
    kind: str,
    thread_id: str | None,
    run_id: int | None,
    providers: Sequence[Provider] | None = None,
) -> Completion:
    """One memory LLM call with locality-safe fallback. Never call inside a transaction.

    ``providers``: :func:`memory_providers` of ``agent``, when the caller read them already.
    """
    candidates = memory_providers(agent=agent) if providers is None else providers
    last_code = "provider_unreachable"
    for provider in candidates:
        faults.checkpoint(f"{kind}.before_llm")
        try:
            completion = client_for(provider).complete(messages, purpose=purpose)
        except ProviderError as exc:
            _record(
                agent=agent,
                kind=kind,
                provider=provider,
                thread_id=thread_id,
                run_id=run_id,
                completion=None,
                error_code=exc.code,
            )
            logger.warning("memory %s via %s failed: %s", kind, provider.name, exc.code)
            last_code = exc.code
            if not exc.retryable:
                # A rejected key or a malformed answer is not cured by another model
                # of a different vendor; wait for an operator or a retry.
                break
            continue
        faults.checkpoint(f"{kind}.after_llm")
        _record(
            agent=agent,
            kind=kind,
            provider=provider,
            thread_id=thread_id,
            run_id=run_id,
            completion=completion,
        )
        return completion
    raise MemoryDeferred(last_code)
