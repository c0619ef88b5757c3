"""DATABASE_URL and DB_PREPARE_THRESHOLD: what Django is given, and what PostgreSQL does."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from config.env import database_from_url

PG = "postgres://teacher@127.0.0.1:5432/school"


@pytest.mark.parametrize(
    ("threshold", "url", "expected"),
    [
        (None, PG, {"server_side_binding": True, "prepare_threshold": 1}),
        ("", PG, {"server_side_binding": True, "prepare_threshold": 1}),
        ("0", PG, {"server_side_binding": True, "prepare_threshold": 0}),
        ("5", PG, {"server_side_binding": True, "prepare_threshold": 5}),
        ("off", PG, {}),
        ("OFF", PG, {}),
        (" none ", PG, {}),
        # The URL's own options win; a string "false" is not True, so Django binds on
        # the client (and psycopg never prepares a client-bound statement).
        (
            None,
            PG + "?server_side_binding=false",
            {
                "server_side_binding": "false",
                "prepare_threshold": 1,
            },
        ),
        (
            None,
            PG + "?sslmode=require",
            {
                "sslmode": "require",
                "server_side_binding": True,
                "prepare_threshold": 1,
            },
        ),
    ],
)
def test_postgres_options(
    threshold: str | None, url: str, expected: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    if threshold is None:
        monkeypatch.delenv("DB_PREPARE_THRESHOLD", raising=False)
    else:
        monkeypatch.setenv("DB_PREPARE_THRESHOLD", threshold)
    assert database_from_url(url, base_dir=Path("/srv"))["OPTIONS"] == expected


@pytest.mark.parametrize("threshold", ["-1", "1.5", "yes", "on"])
def test_a_bad_threshold_is_a_configuration_error(
    threshold: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DB_PREPARE_THRESHOLD", threshold)
    with pytest.raises(ImproperlyConfigured, match="DB_PREPARE_THRESHOLD"):
        database_from_url(PG, base_dir=Path("/srv"))


def test_sqlite_is_not_given_postgres_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PREPARE_THRESHOLD", "1")
    options = database_from_url("sqlite:///db.sqlite3", base_dir=Path("/srv"))["OPTIONS"]
    assert "server_side_binding" not in options
    assert "prepare_threshold" not in options


@pytest.mark.django_db
def test_postgres_prepares_a_statement_run_again() -> None:
    if connection.vendor != "postgresql":
        assert "server_side_binding" not in connection.settings_dict["OPTIONS"]
        return
    sql = "SELECT %s::integer + 1 AS prepared_probe"
    with connection.cursor() as cursor:
        for value in (1, 2, 3):
            cursor.execute(sql, [value])
            assert cursor.fetchone() == (value + 1,)
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%prepared_probe%"],
        )
        (prepared,) = cursor.fetchone()
    threshold = connection.settings_dict["OPTIONS"].get("prepare_threshold")
    assert prepared == (1 if threshold is not None and threshold <= 2 else 0)
