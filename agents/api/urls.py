from django.urls import re_path

from agents.api import views
from agents.api.paths import ID

# Every API path works with and without a trailing slash.
urlpatterns = [
    re_path(r"^auth/token/?$", views.TokenView.as_view(), name="api-token"),
    re_path(r"^agents/?$", views.AgentListView.as_view(), name="api-agents"),
    re_path(rf"^agents/(?P<agent_id>{ID})/?$", views.AgentDetailView.as_view(), name="api-agent"),
]
