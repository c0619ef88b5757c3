"""The memory panel (issue #5): the teacher confirms, edits or deletes long-term facts.

Plain HTML forms first: every action is a POST that redirects back to
``/memory/?agent=<id>`` with a flash message, so the page works with JavaScript off.
``static/web/memory.js`` only enhances it (no full reload, select-all).

Views are thin (named ``*_view``, never after the service they call). Reads go through
the access-checked getters of ``memory.selectors`` narrowed to the teacher's own scope;
every write is one call to ``memory.services.facts`` with ``actor_id=actor_id(request)``
(the only write path from a candidate to a fact; bulk confirm's order, cap and eviction
are ``candidates_confirm_many``'s). An item outside the chosen agent's scope of the
current teacher is a 404, whether it belongs to a colleague or to another school.
"""

from __future__ import annotations

from datetime import date

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import URLPattern, path, re_path, reverse
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from agents import selectors
from agents.models import Agent
from memory.models import MAX_FACT_CHARS, CoreCandidate
from memory.scope import Scope
from memory.selectors import candidate_get, candidates_get, fact_get
from memory.services import facts
from memory.services.core import (
    candidates_for_scope,
    facts_expired_for_scope,
    facts_live_for_scope,
)
from web.forms import actor_id, agent_from, parse_id

# A bulk form never carries more ids than a page can show; more is not a teacher.
BULK_MAX = 200


# -- helpers ------------------------------------------------------------------------------
def _scope(request: HttpRequest, agent: Agent) -> Scope:
    """The panel is one's own memory: the teacher's scope with the chosen agent."""
    return Scope.for_agent(agent, owner_id=actor_id(request))


def _back(agent: Agent) -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{reverse('memory-panel')}?{urlencode({'agent': agent.pk})}")


def _posted_text(request: HttpRequest) -> str | None:
    """The edited text, or None when the form has no text field (plain confirm).

    Emptiness, length and the red line are the service's checks (``FactRejected``); a
    NUL character would fail on PostgreSQL with a 500, so it is refused here.
    """
    if "text" not in request.POST:
        return None
    text = request.POST["text"]
    try:
        ProhibitNullCharactersValidator()(text)
    except ValidationError as exc:
        raise facts.FactRejected(_("事实内容包含无效字符。")) from exc
    return text


def _term_end() -> date:
    return settings.MEMORY_TERM_CALENDAR.current_term_end(timezone.localdate())


def _posted_validity(request: HttpRequest) -> date | facts.Unset | None:
    """The validity chosen in a form: 本学期 (``term``), 长期 (``long``) or a date.

    No choice in the form: :data:`~memory.services.facts.UNSET` (the candidate's own).
    """
    choice = request.POST.get("validity")
    if choice is None:
        return facts.UNSET
    if choice == "long":
        return None
    if choice == "term":
        return _term_end()
    if choice == "date":
        raw = request.POST.get("valid_until_date", "")
        try:
            chosen = parse_date(raw) if raw.isascii() else None
        except ValueError:
            chosen = None
        if chosen is None:
            raise facts.FactRejected(_("请选择有效的日期。"))
        return chosen
    raise facts.FactRejected(_("请选择有效期：本学期、长期或指定日期。"))


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flash_eviction(request: HttpRequest, evicted: list[str]) -> None:
    if evicted:
        messages.info(
            request,
            _("已达上限，已淘汰最久未使用的记忆：%(facts)s")
            % {"facts": "、".join(f"「{_short(t)}」" for t in evicted)},
        )


def _flash_refusal(request: HttpRequest, refusal: facts.Refusal) -> None:
    if refusal.reason is facts.Refused.FORBIDDEN:
        # The getters only hand out the teacher's own items: a race with a membership
        # change. Like any item that is not theirs, it is a 404.
        raise Http404
    if refusal.reason is facts.Refused.GONE:
        messages.warning(request, _("这条候选记忆已不存在（可能刚被处理过）。"))
    else:
        messages.error(request, refusal.message)


# -- the page -----------------------------------------------------------------------------
def memory_strings() -> dict[str, str]:
    """The few strings memory.js shows. Placeholders use the ``%(name)s`` form."""
    return {
        "networkError": _("网络连接中断，操作没有完成。请检查网络后重试。"),
        "httpError": _("服务器出错了（HTTP %(status)s），请刷新页面后重试。"),
        "notFound": _("找不到这条记忆，它可能已被处理。列表已刷新。"),
        "selected": _("已选 %(n)s 条"),
    }


@require_GET
@login_required
def memory_page(request: HttpRequest) -> HttpResponse:
    agents = list(selectors.agent_list(actor=request.user))
    raw = request.GET.get("agent")
    if raw is not None:
        agent: Agent | None = agent_from(request, raw)
    else:
        agent = agents[0] if agents else None
    context: dict[str, object] = {
        "agents": agents,
        "agent": agent,
        "many_tenants": len({a.tenant_id for a in agents}) > 1,
        "capacity": settings.CORE_FACTS_MAX,
        "memory_strings": memory_strings(),
    }
    if agent is not None:
        scope = _scope(request, agent)
        fact_list = list(facts_live_for_scope(scope=scope))
        candidate_list = list(candidates_for_scope(scope=scope).select_related("source_run"))
        for candidate in candidate_list:
            candidate.percent = round(candidate.confidence * 100)  # type: ignore[attr-defined]
        context.update(
            facts=fact_list,
            expired_facts=list(facts_expired_for_scope(scope=scope)),
            candidates=candidate_list,
            fact_count=len(fact_list),
            full=len(fact_list) >= settings.CORE_FACTS_MAX,
            would_evict=facts.eviction_preview(scope=scope),
            text_max=MAX_FACT_CHARS,
            term_end=_term_end(),
            today=timezone.localdate(),
        )
    return render(request, "web/memory.html", context)


# -- candidate actions --------------------------------------------------------------------
@require_POST
@login_required
def candidate_confirm_view(request: HttpRequest, candidate_id: str) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    candidate = candidate_get(
        actor=request.user, candidate_id=int(candidate_id), scope=_scope(request, agent)
    )
    try:
        text = _posted_text(request)
        result = facts.candidate_confirm(
            candidate=candidate,
            actor_id=actor_id(request),
            text=text,
            valid_until=_posted_validity(request),
        )
    except facts.FactRejected as exc:
        messages.error(request, str(exc))
        return _back(agent)
    except CoreCandidate.DoesNotExist:
        messages.warning(request, _("这条候选记忆已不存在（可能刚被处理过）。"))
        return _back(agent)
    except PermissionError as exc:
        raise Http404 from exc
    shown = {"fact": _short(result.fact.text)}
    if result.merged:
        messages.success(request, _("已确认：与已有记忆「%(fact)s」相同，已合并。") % shown)
    else:
        messages.success(request, _("已确认：「%(fact)s」") % shown)
    _flash_eviction(request, [result.evicted_text] if result.evicted_text is not None else [])
    return _back(agent)


@require_POST
@login_required
def candidate_reject_view(request: HttpRequest, candidate_id: str) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    candidate = candidate_get(
        actor=request.user, candidate_id=int(candidate_id), scope=_scope(request, agent)
    )
    try:
        facts.candidate_reject(candidate=candidate, actor_id=actor_id(request))
    except PermissionError as exc:
        raise Http404 from exc
    messages.success(request, _("已删除候选记忆：「%(fact)s」") % {"fact": _short(candidate.fact)})
    return _back(agent)


@require_POST
@login_required
def candidates_bulk_view(request: HttpRequest) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    action = request.POST.get("action")
    if action not in {"confirm", "delete"}:
        messages.error(request, _("请选择要执行的批量操作。"))
        return _back(agent)
    raw_ids = request.POST.getlist("ids")
    ids = [parse_id(raw) for raw in raw_ids]
    if not raw_ids:
        messages.warning(request, _("请先勾选要操作的候选记忆。"))
        return _back(agent)
    if None in ids or len(ids) > BULK_MAX:
        messages.error(request, _("所选内容无效，请刷新页面后重试。"))
        return _back(agent)
    found = candidates_get(
        actor=request.user,
        candidate_ids={i for i in ids if i is not None},
        scope=_scope(request, agent),
    )
    if action == "delete":
        rejected = facts.candidates_reject_many(candidates=found, actor_id=actor_id(request))
        if rejected.forbidden:
            raise Http404
        messages.success(request, _("已删除 %(n)d 条候选记忆。") % {"n": rejected.done})
        return _back(agent)
    result = facts.candidates_confirm_many(candidates=found, actor_id=actor_id(request))
    for refusal in result.refused:
        _flash_refusal(request, refusal)
    if result.confirmed:
        messages.success(request, _("已确认 %(n)d 条记忆。") % {"n": len(result.confirmed)})
    _flash_eviction(request, result.evicted_texts)
    return _back(agent)


# -- fact actions -------------------------------------------------------------------------
@require_POST
@login_required
def fact_update_view(request: HttpRequest, fact_id: str) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    fact = fact_get(actor=request.user, fact_id=int(fact_id), scope=_scope(request, agent))
    try:
        text = _posted_text(request)
        if text is None:
            raise facts.FactRejected(_("事实内容不能为空。"))
        fact = facts.fact_update(fact=fact, actor_id=actor_id(request), text=text)
    except facts.FactRejected as exc:
        messages.error(request, str(exc))
    except PermissionError as exc:
        raise Http404 from exc
    else:
        messages.success(request, _("已保存：「%(fact)s」") % {"fact": _short(fact.text)})
    return _back(agent)


@require_POST
@login_required
def fact_renew_view(request: HttpRequest, fact_id: str) -> HttpResponse:
    """续期: a new validity for a fact (本学期 by default)."""
    agent = agent_from(request, request.POST.get("agent"))
    fact = fact_get(actor=request.user, fact_id=int(fact_id), scope=_scope(request, agent))
    try:
        validity = _posted_validity(request)
        fact = facts.fact_update(
            fact=fact,
            actor_id=actor_id(request),
            valid_until=_term_end() if isinstance(validity, facts.Unset) else validity,
        )
    except facts.FactRejected as exc:
        messages.error(request, str(exc))
    except PermissionError as exc:
        raise Http404 from exc
    else:
        until = fact.valid_until.isoformat() if fact.valid_until else _("长期")
        messages.success(
            request,
            _("已续期：「%(fact)s」（有效期至 %(until)s）")
            % {"fact": _short(fact.text), "until": until},
        )
    return _back(agent)


@require_POST
@login_required
def fact_delete_view(request: HttpRequest, fact_id: str) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    fact = fact_get(actor=request.user, fact_id=int(fact_id), scope=_scope(request, agent))
    try:
        facts.fact_delete(fact=fact, actor_id=actor_id(request))
    except PermissionError as exc:
        raise Http404 from exc
    messages.success(request, _("已删除记忆：「%(fact)s」") % {"fact": _short(fact.text)})
    return _back(agent)


_ID = r"(?P<%s>[0-9]{1,18})"

urlpatterns: list[URLPattern] = [
    path("memory/", memory_page, name="memory-panel"),
    re_path(
        rf"^memory/candidates/{_ID % 'candidate_id'}/confirm/$",
        candidate_confirm_view,
        name="memory-candidate-confirm",
    ),
    re_path(
        rf"^memory/candidates/{_ID % 'candidate_id'}/delete/$",
        candidate_reject_view,
        name="memory-candidate-delete",
    ),
    path("memory/candidates/bulk/", candidates_bulk_view, name="memory-candidate-bulk"),
    re_path(rf"^memory/facts/{_ID % 'fact_id'}/edit/$", fact_update_view, name="memory-fact-edit"),
    re_path(
        rf"^memory/facts/{_ID % 'fact_id'}/delete/$", fact_delete_view, name="memory-fact-delete"
    ),
    re_path(rf"^memory/facts/{_ID % 'fact_id'}/renew/$", fact_renew_view, name="memory-fact-renew"),
]
