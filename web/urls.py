"""Teacher-facing pages. They use only the public API (plus Django's login)."""

from django.urls import include, path

urlpatterns = [
    path("", include("web.chat")),
    path("", include("web.panel")),
    path("", include("web.language")),
    path("", include("web.kb")),
]
