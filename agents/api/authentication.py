"""API tokens, remembered for a few seconds by each web process.

DRF's TokenAuthentication reads the token and its user from the database on every
request: a query per request, a third of a run request's reads before this. Here each
process remembers a token it found valid, with its user, for API_TOKEN_CACHE_SECONDS
(default 10 s). So a token deleted in the admin, or a teacher deactivated, is refused by
every process at most that long later (0: looked up on every request, refused at once).
Only valid tokens are remembered (an unknown key is looked up every time and never fills
the memory), at most ``_MAX_TOKENS`` of them, the least recently used forgotten first.
Each request gets its own copy of the user, so threads of a process never share one.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from typing import Any

from django.conf import settings
from rest_framework.authentication import TokenAuthentication

_MAX_TOKENS = 10_000


class _Remembered:
    """Valid tokens of this process: key → (valid until, user, token)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Any, Any]] = OrderedDict()

    def get(self, key: str, now: float) -> tuple[Any, Any] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= now:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[1], entry[2]

    def put(self, key: str, until: float, user: Any, token: Any) -> None:
        with self._lock:
            self._entries[key] = (until, user, token)
            self._entries.move_to_end(key)
            while len(self._entries) > _MAX_TOKENS:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


remembered = _Remembered()


class RememberedTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        seconds = settings.API_TOKEN_CACHE_SECONDS
        if seconds <= 0:
            return super().authenticate_credentials(key)
        now = time.monotonic()
        hit = remembered.get(key, now)
        if hit is None:
            user, token = super().authenticate_credentials(key)  # AuthenticationFailed
            remembered.put(key, now + seconds, user, token)
            hit = (user, token)
        user, token = hit
        return copy.copy(user), token
