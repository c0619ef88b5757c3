from django.urls import re_path

from agents.api.paths import ID
from memory.api import core_views, recall_views, views

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
        rf"^agents/(?P<agent_id>{ID})/recall/?$",
        recall_views.RecallSearchView.as_view(),
        name="api-recall",
    ),
]
