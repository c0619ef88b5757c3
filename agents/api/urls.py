from django.urls import re_path

from agents.api import export_views, views

# Every API path works with and without a trailing slash.
urlpatterns = [
    re_path(r"^auth/token/?$", views.TokenView.as_view(), name="api-token"),
    re_path(r"^agents/?$", views.AgentListView.as_view(), name="api-agents"),
    re_path(r"^agents/(?P<agent_id>\d{1,18})/run/?$", views.AgentRunView.as_view(), name="api-run"),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/run/stream/?$",
        views.AgentRunStreamView.as_view(),
        name="api-run-stream",
    ),
    re_path(r"^runs/(?P<run_id>\d{1,18})/?$", views.RunDetailView.as_view(), name="api-run-detail"),
    re_path(
        r"^runs/(?P<run_id>\d{1,18})/export/?$",
        export_views.RunExportView.as_view(),
        name="api-run-export",
    ),
]
