from django.urls import re_path

from agents.api import views

# Every API path works with and without a trailing slash.
urlpatterns = [
    re_path(r"^auth/token/?$", views.TokenView.as_view(), name="api-token"),
    re_path(r"^agents/?$", views.AgentListView.as_view(), name="api-agents"),
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/?$", views.AgentDetailView.as_view(), name="api-agent"
    ),
]
