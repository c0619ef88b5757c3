"""The header's language switch (issue #18): one POST, then back to the page.

Anyone may switch (the login page has the switch too): the choice goes into Django's
language cookie, which ``LocaleMiddleware`` reads. A signed-in teacher's choice is also
stored on the account (``agents.services.preference_language_set``), so it follows them
to another computer.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.urls import URLPattern, path
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from agents.middleware import remember_language
from agents.services import LanguageRejected, preference_language_set


def _next_url(request: HttpRequest) -> str:
    for candidate in (request.POST.get("next"), request.headers.get("referer")):
        if candidate and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return candidate
    return "/"


@require_POST
def language_set_view(request: HttpRequest) -> HttpResponse:
    language = request.POST.get("language", "")
    if request.user.is_authenticated:
        try:
            preference_language_set(user_id=int(request.user.pk), language=language)
        except LanguageRejected:
            return HttpResponseBadRequest(_("不支持这种界面语言。"))
        remember_language(request, language)
    elif language not in dict(settings.LANGUAGES):
        return HttpResponseBadRequest(_("不支持这种界面语言。"))
    response = HttpResponseRedirect(_next_url(request))
    if not language:  # the account follows the browser again
        response.delete_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            path=settings.LANGUAGE_COOKIE_PATH,
            domain=settings.LANGUAGE_COOKIE_DOMAIN,
        )
        return response
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response


urlpatterns: list[URLPattern] = [
    path("language/", language_set_view, name="language-set"),
]
