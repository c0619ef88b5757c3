from django.urls import re_path

from agents.api.paths import ID
from memory.api import core_views, governance_views, kb_views, recall_views, views

THREAD_ID = r"(?P<thread_id>th_[0-9a-f]{1,28})"

urlpatterns = [
    re_path(
        rf"^agents/(?P<agent_id>{ID})/threads/?$",
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
        rf"^agents/(?P<agent_id>{ID})/memory/facts/?$",
        core_views.FactListView.as_view(),
        name="api-memory-facts",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/memory/candidates/?$",
        core_views.CandidateListView.as_view(),
        name="api-memory-candidates",
    ),
    re_path(
        rf"^memory/candidates/(?P<candidate_id>{ID})/confirm/?$",
        core_views.CandidateConfirmView.as_view(),
        name="api-candidate-confirm",
    ),
    re_path(
        rf"^memory/candidates/(?P<candidate_id>{ID})/reject/?$",
        core_views.CandidateRejectView.as_view(),
        name="api-candidate-reject",
    ),
    re_path(
        rf"^memory/facts/(?P<fact_id>{ID})/?$",
        core_views.FactDetailView.as_view(),
        name="api-memory-fact",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/memory/forget/?$",
        governance_views.ForgetView.as_view(),
        name="api-memory-forget",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/memory/audit/?$",
        governance_views.AuditListView.as_view(),
        name="api-memory-audit",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/memory/export/?$",
        governance_views.ExportView.as_view(),
        name="api-memory-export",
    ),
    re_path(
        rf"^memory/jobs/(?P<job_id>{ID})/?$",
        governance_views.MemoryJobView.as_view(),
        name="api-memory-job",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/recall/?$",
        recall_views.RecallSearchView.as_view(),
        name="api-recall",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/kb/documents/?$",
        kb_views.AgentKBDocumentsView.as_view(),
        name="api-kb-documents",
    ),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/kb/search/?$",
        kb_views.AgentKBSearchView.as_view(),
        name="api-kb-search",
    ),
    re_path(
        rf"^kb/documents/(?P<document_id>{ID})/?$",
        kb_views.KBDocumentDetailView.as_view(),
        name="api-kb-document",
    ),
]
