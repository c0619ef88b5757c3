"""The knowledge-base page (知识库): upload, list, delete, and search as the agent would.

Plain HTML forms first, like the memory panel: upload is a multipart POST, delete a POST,
search a GET, each redirecting back (or rendering) with a flash message, so the page
works with JavaScript off. ``static/web/kb.js`` adds drag and drop onto the upload
form and refreshes the status of documents still processing.

Views are thin: documents through ``memory.selectors.kb_document_get`` and
``memory.services.kb_documents``; search through ``memory.services.kb``, showing both
the ranked hits and the exact ``[知识库检索结果]`` text the agent would be given.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadedfile import UploadedFile
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import URLPattern, path, re_path, reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from agents import selectors
from agents.models import Agent
from memory.models import KBDocument
from memory.scope import Scope
from memory.selectors import kb_document_get, kb_document_may_delete, kb_documents_deletable
from memory.services.kb import kb_hits_render, kb_search
from memory.services.kb_documents import (
    KBRejected,
    kb_document_create,
    kb_document_delete,
    kb_documents_visible,
)
from web.forms import actor_id, agent_from

# Documents shown on the page (newest first); the API pages through all of them.
PAGE_DOCUMENTS = 100
SEARCH_MAX_CHARS = 2000


def _back(agent: Agent) -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{reverse('kb-page')}?{urlencode({'agent': agent.pk})}")


def kb_strings() -> dict[str, str]:
    """The few strings kb.js shows."""
    return {
        "uploading": _("正在上传…"),
        "statusReady": _("可用"),
        "statusFailed": _("失败"),
        "statusProcessing": _("处理中"),
    }


@require_GET
@login_required
def kb_page(request: HttpRequest) -> HttpResponse:
    agents = list(selectors.agent_list(actor=request.user))
    raw = request.GET.get("agent")
    agent: Agent | None = (
        agent_from(request, raw) if raw is not None else (agents[0] if agents else None)
    )
    context: dict[str, object] = {
        "agents": agents,
        "agent": agent,
        "many_tenants": len({a.tenant_id for a in agents}) > 1,
        "kb_strings": kb_strings(),
        "visibilities": KBDocument.Visibility.choices,
    }
    if agent is not None:
        scope = Scope.for_agent(agent, owner_id=actor_id(request))
        documents = list(kb_documents_visible(scope=scope)[:PAGE_DOCUMENTS])
        deletable = kb_documents_deletable(actor=request.user, documents=documents)
        for document in documents:
            document.deletable = document.pk in deletable  # type: ignore[attr-defined]
        context.update(
            documents=documents, processing=any(d.status == "processing" for d in documents)
        )
        query = " ".join(request.GET.get("q", "").split())[:SEARCH_MAX_CHARS]
        if query:
            hits = kb_search(scope=scope, query=query)
            injected = kb_hits_render(
                hits=[hit for hit in hits if hit.passes_gate], budget=settings.CONTEXT_CAP_KB
            )
            context.update(query=query, hits=hits, injected=injected.text)
    return render(request, "web/kb.html", context)


@require_POST
@login_required
def kb_upload_view(request: HttpRequest) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    upload = request.FILES.get("file")
    if not isinstance(upload, UploadedFile):
        messages.error(request, _("请选择要上传的文件。"))
        return _back(agent)
    visibility = request.POST.get("visibility") or KBDocument.Visibility.AGENT
    try:
        document = kb_document_create(
            agent=agent,
            owner_id=actor_id(request),
            visibility=visibility,
            title=request.POST.get("title", ""),
            filename=upload.name or "",
            data=upload.read(),
        )
    except KBRejected as exc:
        messages.error(
            request, _("没有上传「%(name)s」：%(reason)s") % {"name": upload.name, "reason": exc}
        )
        return _back(agent)
    messages.success(
        request,
        _("已上传「%(title)s」，正在后台处理，完成后即可检索。") % {"title": document.title},
    )
    return _back(agent)


@require_POST
@login_required
def kb_delete_view(request: HttpRequest, document_id: str) -> HttpResponse:
    agent = agent_from(request, request.POST.get("agent"))
    document = kb_document_get(actor=request.user, document_id=int(document_id))
    if document.agent_id != agent.pk:
        raise Http404
    if not kb_document_may_delete(actor=request.user, document=document):
        messages.error(request, _("只有上传者或学校管理员可以删除这份共享文档。"))
        return _back(agent)
    kb_document_delete(document=document)
    messages.success(request, _("已删除「%(title)s」。") % {"title": document.title})
    return _back(agent)


urlpatterns: list[URLPattern] = [
    path("kb/", kb_page, name="kb-page"),
    path("kb/upload/", kb_upload_view, name="kb-upload"),
    re_path(
        r"^kb/documents/(?P<document_id>[0-9]{1,18})/delete/$", kb_delete_view, name="kb-delete"
    ),
]
