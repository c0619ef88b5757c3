from django.urls import re_path

from memory.api.urls import THREAD_ID
from runs.api import export_views, views

# Every API path works with and without a trailing slash.
urlpatterns = [
    re_path(r"^agents/(?P<agent_id>\d{1,18})/run/?$", views.AgentRunView.as_view(), name="api-run"),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/run/stream/?$",
        views.AgentRunStreamView.as_view(),
        name="api-run-stream",
    ),
    re_path(r"^runs/(?P<run_id>\d{1,18})/?$", views.RunDetailView.as_view(), name="api-run-detail"),
    re_path(
        r"^runs/(?P<run_id>\d{1,18})/context/?$",
        views.RunContextView.as_view(),
        name="api-run-context",
    ),
    re_path(
        r"^runs/(?P<run_id>\d{1,18})/export/?$",
        export_views.RunExportView.as_view(),
        name="api-run-export",
    ),
    re_path(
        rf"^threads/{THREAD_ID}/runs/?$", views.ThreadRunsView.as_view(), name="api-thread-runs"
    ),
]
