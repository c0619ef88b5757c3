"""Writes about accounts that are no operator's job: a user's own preferences."""

from __future__ import annotations

from django.conf import settings

from agents.models import Preference


class LanguageRejected(ValueError):
    """Not one of ``settings.LANGUAGES`` (nor "" for the browser's)."""


def preference_language_set(*, user_id: int, language: str) -> str:
    """Store the user's interface language ("" follows the browser); return it."""
    if language and language not in dict(settings.LANGUAGES):
        raise LanguageRejected(language)
    Preference.objects.update_or_create(user_id=user_id, defaults={"language": language})
    return language
