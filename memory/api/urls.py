from django.urls import re_path

from memory.api import views

_THREAD = r"(?P<thread_id>th_[0-9a-f]{1,28})"

urlpatterns = [
    re_path(
        r"^agents/(?P<agent_id>\d{1,18})/threads/?$",
        views.AgentThreadListView.as_view(),
        name="api-agent-threads",
    ),
    re_path(rf"^threads/{_THREAD}/?$", views.ThreadDetailView.as_view(), name="api-thread"),
    re_path(
        rf"^threads/{_THREAD}/archive/?$", views.ThreadArchiveView.as_view(), name="api-thread-archive"
    ),
    re_path(rf"^threads/{_THREAD}/runs/?$", views.ThreadRunsView.as_view(), name="api-thread-runs"),
    re_path(
        r"^runs/(?P<run_id>\d{1,18})/context/?$",
        views.RunContextView.as_view(),
        name="api-run-context",
    ),
]
