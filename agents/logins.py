"""Wrong passwords: django-axes counts them; this module says how a lockout looks.

Axes (settings.AXES_*) hooks Django's ``authenticate()``, so every login surface that
calls it with the request is covered by one count: the API's ``/api/auth/token``, the
teachers' ``/accounts/login/`` and the operators' ``/admin/login/``. Failures are
counted per username and per client address (AXES_LOCKOUT_PARAMETERS) in the database
(AccessAttempt rows, visible in the admin), which every web process shares. After
LOGIN_FAILURE_LIMIT failures within LOGIN_COOLOFF_SECONDS, further attempts are refused
until that long after the last counted failure (attempts made while locked out are not
counted, so waiting the time shown is enough).
"""

from __future__ import annotations

import math
from typing import Any

from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.db.models import Max, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.throttling import BaseThrottle

from agents.api.middleware import is_api


def client_address(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or X-Forwarded-For behind WEB_PROXY_COUNT proxies.

    DRF's rule (REST_FRAMEWORK["NUM_PROXIES"]), so logins and the API agree on who a
    client is. Without a proxy a client's own X-Forwarded-For is ignored.
    """
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]


def retry_after_seconds(request: HttpRequest, credentials: dict[str, Any] | None) -> int:
    """Seconds until the lockout of this username or address ends (at least 1)."""
    cool_off = get_cool_off(request)
    if cool_off is None:
        return 0
    now = timezone.now()
    username = get_client_username(request, credentials)
    address = getattr(request, "axes_ip_address", None) or client_address(request)
    matching = Q(ip_address=address)
    if username:
        matching |= Q(username=username)
    last = AccessAttempt.objects.filter(matching, attempt_time__gte=now - cool_off).aggregate(
        last=Max("attempt_time")
    )["last"]
    if last is None:
        return 1
    return max(1, math.ceil((last + cool_off - now).total_seconds()))


def lockout_message(seconds: int) -> str:
    if seconds >= 120:
        return _("登录失败次数过多，请 %(n)d 分钟后再试。") % {"n": math.ceil(seconds / 60)}
    return _("登录失败次数过多，请 %(n)d 秒后再试。") % {"n": seconds}


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 JSON with Retry-After on the API, a Chinese page elsewhere."""
    seconds = retry_after_seconds(request, credentials)
    message = lockout_message(seconds)
    response: HttpResponse
    if is_api(request):
        response = JsonResponse(
            {"detail": message, "code": "login_locked", "retry_after": seconds},
            status=429,
            json_dumps_params={"ensure_ascii": False},
        )
    else:
        admin = request.path_info.startswith("/admin/")
        login_url = reverse("admin:login") if admin else reverse("login")
        response = render(
            request,
            "registration/locked_out.html",
            {"message": message, "login_url": login_url},
            status=429,
        )
    response["Retry-After"] = str(seconds)
    return response
