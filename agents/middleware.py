"""The interface language of a signed-in user: their account's choice, if they made one.

Django's ``LocaleMiddleware`` (before this one) picks the language from the language
cookie, then the browser's ``Accept-Language``, then ``LANGUAGE_CODE``. For a signed-in
user whose account names a language, this middleware (after ``AuthenticationMiddleware``)
switches to it, so the choice follows the teacher from one computer to the next. The
account's choice is read once per session and kept in it (``remember_language`` updates
it when the teacher switches). A token-authenticated API client is not known yet at
this point (DRF authenticates in the view): it gets its ``Accept-Language``, and a
request that carries a token is not looked up by its session cookie either (the token,
not the cookie, says who it is; the session and its user would cost two queries).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from agents.selectors import preferred_language

SESSION_KEY = "account_language"


def remember_language(request: HttpRequest, language: str) -> None:
    """Keep the account's language in the session ("" follows the browser)."""
    request.session[SESSION_KEY] = language


class AccountLanguageMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.META.get("HTTP_AUTHORIZATION"):
            return self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            language = request.session.get(SESSION_KEY)
            if language is None:
                language = preferred_language(user_id=int(user.pk))
                remember_language(request, language)
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
