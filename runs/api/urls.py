from django.urls import re_path

from agents.api.paths import ID
from memory.api.urls import THREAD_ID
from runs.api import export_views, views

# Every API path works with and without a trailing slash.
urlpatterns = [
    re_path(rf"^agents/(?P<agent_id>{ID})/run/?$", views.AgentRunView.as_view(), name="api-run"),
    re_path(
        rf"^agents/(?P<agent_id>{ID})/run/stream/?$",
        views.AgentRunStreamView.as_view(),
        name="api-run-stream",
    ),
    re_path(rf"^runs/(?P<run_id>{ID})/?$", views.RunDetailView.as_view(), name="api-run-detail"),
    re_path(
        rf"^runs/(?P<run_id>{ID})/context/?$",
        views.RunContextView.as_view(),
        name="api-run-context",
    ),
    re_path(
        rf"^runs/(?P<run_id>{ID})/export/?$",
        export_views.RunExportView.as_view(),
        name="api-run-export",
    ),
    re_path(
        rf"^threads/{THREAD_ID}/runs/?$", views.ThreadRunsView.as_view(), name="api-thread-runs"
    ),
]
