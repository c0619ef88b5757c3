"""Which language a page speaks (issue #18): the account's choice, else the language
cookie (the header's switch), else the browser's Accept-Language, else Chinese. API
error messages follow the same choice."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Preference, Run
from tests.factories import Teacher

pytestmark = pytest.mark.django_db

ENGLISH = "en-US,en;q=0.9"
CHINESE = "zh-CN,zh;q=0.9"


def lang_of(response: object) -> str:
    html = response.content.decode()  # type: ignore[attr-defined]
    return html.split('<html lang="', 1)[1].split('"', 1)[0]


def signed_in(teacher: Teacher) -> Client:
    client = Client()
    client.force_login(teacher.user)
    return client


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (ENGLISH, "en"),
        ("en-GB", "en"),
        (CHINESE, "zh-hans"),
        ("zh-Hans-CN", "zh-hans"),
        ("zh-TW", "zh-hans"),  # no traditional catalogue: the Chinese source
        ("fr-FR,fr;q=0.9", "zh-hans"),  # not offered: the default
        ("", "zh-hans"),
    ],
)
def test_the_browser_language_chooses_without_an_account_choice(accept: str, expected: str) -> None:
    response = Client().get("/accounts/login/", HTTP_ACCEPT_LANGUAGE=accept)
    assert lang_of(response) == expected
    assert response["Content-Language"] == expected
    assert "Accept-Language" in response["Vary"]


def test_the_switch_sets_the_cookie_and_goes_back_for_anyone() -> None:
    client = Client()
    response = client.post("/language/", {"language": "en", "next": "/accounts/login/?next=/x"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/x"
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE=CHINESE)
    assert lang_of(page) == "en"
    assert "Sign in" in page.content.decode()


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/chat/", "javascript:alert(1)"]
)
def test_the_switch_never_redirects_off_the_site(next_url: str) -> None:
    response = Client().post("/language/", {"language": "en", "next": next_url})
    assert response["Location"] == "/"


@pytest.mark.parametrize("language", ["fr", "", "EN", "en\x00", "zh-hant", "x" * 500])
def test_an_unknown_language_is_a_400_and_changes_nothing(language: str) -> None:
    client = Client()
    response = client.post("/language/", {"language": language})
    assert response.status_code == 400
    assert settings.LANGUAGE_COOKIE_NAME not in client.cookies


def test_the_switch_is_a_post_with_a_csrf_token() -> None:
    assert Client().get("/language/?language=en").status_code == 405
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/language/", {"language": "en"}).status_code == 403


def test_a_teachers_choice_is_kept_on_the_account_and_beats_the_browser(
    teacher: Teacher,
) -> None:
    client = signed_in(teacher)
    assert lang_of(client.get("/chat/", HTTP_ACCEPT_LANGUAGE=CHINESE)) == "zh-hans"
    client.post("/language/", {"language": "en", "next": "/chat/"})
    assert Preference.objects.get(user=teacher.user).language == "en"
    client.cookies.pop(settings.LANGUAGE_COOKIE_NAME)  # another tab without the cookie
    assert lang_of(client.get("/chat/", HTTP_ACCEPT_LANGUAGE=CHINESE)) == "en"

    # Another computer: a new session, a Chinese browser, no cookie -- still English.
    elsewhere = signed_in(teacher)
    page = elsewhere.get("/memory/", HTTP_ACCEPT_LANGUAGE=CHINESE)
    assert lang_of(page) == "en"
    assert "Long-term memory" in page.content.decode()

    # Back to Chinese from the English page.
    elsewhere.post("/language/", {"language": "zh-hans"})
    assert Preference.objects.get(user=teacher.user).language == "zh-hans"
    assert lang_of(elsewhere.get("/chat/", HTTP_ACCEPT_LANGUAGE=ENGLISH)) == "zh-hans"


def test_an_empty_choice_follows_the_browser_again(teacher: Teacher) -> None:
    client = signed_in(teacher)
    client.post("/language/", {"language": "en"})
    response = client.post("/language/", {"language": ""})
    assert response.status_code == 302
    assert Preference.objects.get(user=teacher.user).language == ""
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == ""  # deleted
    assert lang_of(client.get("/chat/", HTTP_ACCEPT_LANGUAGE=CHINESE)) == "zh-hans"
    assert lang_of(client.get("/chat/", HTTP_ACCEPT_LANGUAGE=ENGLISH)) == "en"


def test_the_choice_is_read_once_a_session(
    teacher: Teacher, django_assert_num_queries: object
) -> None:
    Preference.objects.create(user=teacher.user, language="en")
    client = signed_in(teacher)
    assert lang_of(client.get("/chat/")) == "en"
    # Later requests: the session, the user; no preference query.
    with django_assert_num_queries(2):  # type: ignore[operator]
        assert lang_of(client.get("/chat/")) == "en"


def test_the_chat_page_hands_its_javascript_the_chosen_language(teacher: Teacher) -> None:
    Preference.objects.create(user=teacher.user, language="en")
    html = signed_in(teacher).get("/chat/").content.decode()
    assert '"thinking": "Thinking\\u2026"' in html
    assert '"newThreadTitle": "New conversation"' in html


def test_api_errors_speak_the_session_users_language(teacher: Teacher) -> None:
    Preference.objects.create(user=teacher.user, language="en")
    client = signed_in(teacher)
    client.get("/chat/")  # the CSRF cookie, as the page sets it
    response = client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {"input": "   "},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert response.status_code == 400
    assert response.json()["input"] == ["The input cannot be empty."]


@pytest.mark.parametrize(
    ("accept", "message"), [(ENGLISH, "The input cannot be empty."), ("", "输入不能为空。")]
)
def test_api_errors_follow_a_token_clients_accept_language(
    teacher: Teacher, accept: str, message: str
) -> None:
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {"input": "   "},
        format="json",
        HTTP_ACCEPT_LANGUAGE=accept,
    )
    assert response.status_code == 400
    assert response.json()["input"] == [message]


def test_a_token_request_with_a_session_cookie_is_the_tokens_client(
    teacher: Teacher, colleague: Teacher
) -> None:
    """The token says who calls: the session cookie's teacher (here another one, who
    chose English) is not looked up, and the request speaks its Accept-Language."""
    Preference.objects.create(user=colleague.user, language="en")
    client = teacher.client
    client.force_login(colleague.user)
    client.get("/chat/")  # the colleague's session has its language now
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/api/agents/{teacher.agent.pk}/run",
            {"input": "   "},
            format="json",
            HTTP_ACCEPT_LANGUAGE=CHINESE,
        )
    assert response.status_code == 400
    assert response.json()["input"] == ["输入不能为空。"]
    tables = " ".join(q["sql"] for q in queries)
    assert "django_session" not in tables


def test_a_failed_runs_message_follows_the_language_it_is_read_in(teacher: Teacher) -> None:
    """The run stores an error code; the sentence is made when it is shown."""
    run = Run.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        input="x",
        status=Run.Status.FAILED,
        error_code="provider_timeout",
    )
    english = teacher.client.get(f"/api/runs/{run.pk}", HTTP_ACCEPT_LANGUAGE=ENGLISH).json()
    chinese = teacher.client.get(f"/api/runs/{run.pk}", HTTP_ACCEPT_LANGUAGE=CHINESE).json()
    assert english["error_message"] == "The model took too long to answer. Please try again later."
    assert chinese["error_message"] == "模型响应超时，请稍后重试。"
