from django.urls import re_path

from memory.api import core_views, governance_views, kb_views, recall_views, views

THREAD_ID = r"(?P<thread_id>th_[0-9a-f]{1,28})"

urlpatterns = [
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/threads/?$",
        views.AgentThreadListView.as_view(),
        name="api-agent-threads",
    ),
    re_path(rf"^threads/{THREAD_ID}/?$", views.ThreadDetailView.as_view(), name="api-thread"),
    re_path(
        rf"^threads/{THREAD_ID}/archive/?$",
        views.ThreadArchiveView.as_view(),
        name="api-thread-archive",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/memory/facts/?$",
        core_views.FactListView.as_view(),
        name="api-memory-facts",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/memory/candidates/?$",
        core_views.CandidateListView.as_view(),
        name="api-memory-candidates",
    ),
    re_path(
        r"^memory/candidates/(?P<candidate_id>\d{1,18})/confirm/?$",
        core_views.CandidateConfirmView.as_view(),
        name="api-candidate-confirm",
    ),
    re_path(
        r"^memory/candidates/(?P<candidate_id>\d{1,18})/reject/?$",
        core_views.CandidateRejectView.as_view(),
        name="api-candidate-reject",
    ),
    re_path(
        r"^memory/facts/(?P<fact_id>\d{1,18})/?$",
        core_views.FactDetailView.as_view(),
        name="api-memory-fact",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/memory/forget/?$",
        governance_views.ForgetView.as_view(),
        name="api-memory-forget",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/memory/audit/?$",
        governance_views.AuditListView.as_view(),
        name="api-memory-audit",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/memory/export/?$",
        governance_views.ExportView.as_view(),
        name="api-memory-export",
    ),
    re_path(
        r"^memory/jobs/(?P<job_id>\d{1,18})/?$",
        governance_views.MemoryJobView.as_view(),
        name="api-memory-job",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/recall/?$",
        recall_views.RecallSearchView.as_view(),
        name="api-recall",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/kb/documents/?$",
        kb_views.AgentKBDocumentsView.as_view(),
        name="api-kb-documents",
    ),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/kb/search/?$",
        kb_views.AgentKBSearchView.as_view(),
        name="api-kb-search",
    ),
    re_path(
        r"^kb/documents/(?P<document_id>\d{1,18})/?$",
        kb_views.KBDocumentDetailView.as_view(),
        name="api-kb-document",
    ),
]
