"""`manage.py doctor`: healthy passes; each broken part shows ✗ with a hint and exit 1.

The healthy case runs a real qcluster (its heartbeat is what doctor looks for) against
the test database, on whichever broker the environment selects (tests/cluster.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings
from django.utils import timezone
from django_q.models import OrmQ

from ops.doctor import CheckResult, check_static_files, check_worker, doctor_run
from tests.cluster import ROOT, Cluster, child_env, wait_until
from tests.factories import make_provider, make_teacher
from tests.fakellm import FakeLLMServer, unused_port

KEY_VAR = "DOCTOR_TEST_API_KEY"


def doctor(*, expect_exit: int = 0) -> str:
    out = StringIO()
    if expect_exit:
        with pytest.raises(SystemExit) as exited:
            call_command("doctor", stdout=out)
        assert exited.value.code == expect_exit
    else:
        call_command("doctor", stdout=out)
    return out.getvalue()


def doctor_process(**env: str) -> subprocess.CompletedProcess[str]:
    """``manage.py doctor`` as its own process (settings are read at start), on the test
    database, bounded in time (the timeout is the test of "fast")."""
    return subprocess.run(
        [sys.executable, "manage.py", "doctor"],
        cwd=ROOT,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def line(output: str, name: str) -> str:
    """The table line of one check (mark, name, detail) and its hint line, if any."""
    lines = output.splitlines()
    for index, text in enumerate(lines):
        if text[2:].startswith(name + " "):
            hint = lines[index + 1] if index + 1 < len(lines) and "→" in lines[index + 1] else ""
            return f"{text}\n{hint}".strip()
    raise AssertionError(f"no line for {name!r} in:\n{output}")


def by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {result.name: result for result in results}


@pytest.mark.django_db
def test_a_provider_on_a_closed_port_fails_with_a_hint_and_exit_1() -> None:
    make_provider(name="ollama-down", base_url=f"http://127.0.0.1:{unused_port()}/v1")
    output = doctor(expect_exit=1)
    provider = line(output, "provider ollama-down")
    assert provider.startswith("✗")
    assert "unreachable" in provider and "→" in provider and "base_url" in provider
    assert "checks failed" in output


@pytest.mark.django_db
def test_a_reachable_provider_passes_and_the_key_is_sent_but_never_printed(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-doctor-Zq81xN0-secret-value"
    monkeypatch.setenv(KEY_VAR, secret)
    make_provider(name="fake", base_url=fake_llm.base_url, api_key_env=KEY_VAR)
    make_provider(name="down", base_url=f"http://127.0.0.1:{unused_port()}/v1", api_key_env=KEY_VAR)
    output = doctor(expect_exit=1)  # the worker is not running and "down" is down
    assert line(output, "provider fake").startswith("✓")
    assert line(output, "provider down").startswith("✗")
    assert fake_llm.last_request.headers["Authorization"] == f"Bearer {secret}"
    assert fake_llm.last_request.path.endswith("/models")
    assert secret not in output and secret[:12] not in output
    assert KEY_VAR not in line(output, "provider fake")


# Keys an operator might paste badly: http.client would echo some of them in its error.
NASTY_KEYS = ["sk-line\nbreak-Zq81", "sk-with space-Zq81", "sk-tab\t-Zq81", "ключ-密钥-Zq81"]


@pytest.mark.django_db
@pytest.mark.parametrize("secret", NASTY_KEYS)
def test_a_malformed_key_is_never_echoed(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    monkeypatch.setenv(KEY_VAR, secret)
    make_provider(name="fake", base_url=fake_llm.base_url, api_key_env=KEY_VAR)
    output = doctor(expect_exit=1)
    for part in secret.split():
        assert part not in output
    assert "Zq81" not in output


@pytest.mark.django_db
def test_a_key_variable_that_is_not_set_fails_with_its_name(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    make_provider(name="fake", base_url=fake_llm.base_url, api_key_env=KEY_VAR)
    provider = line(doctor(expect_exit=1), "provider fake")
    assert provider.startswith("✗") and f"set {KEY_VAR}" in provider


@pytest.mark.django_db
def test_an_unapplied_migration_shows_a_cross() -> None:
    MigrationRecorder(connection).record_unapplied("memory", "0002_schedule_memory_sweep")
    migrations = line(doctor(expect_exit=1), "migrations")
    assert migrations.startswith("✗")
    assert "memory.0002_schedule_memory_sweep" in migrations and "migrate" in migrations


@pytest.mark.django_db
def test_no_running_worker_shows_a_cross() -> None:
    worker = line(doctor(expect_exit=1), "worker")
    assert worker.startswith("✗") and "qcluster" in worker


@pytest.mark.django_db
def test_an_orm_task_waiting_too_long_shows_a_cross(settings) -> None:  # type: ignore[no-untyped-def]
    if settings.Q_BROKER_URL:
        pytest.skip("the waiting time is known with the ORM broker only (Redis keeps none)")
    OrmQ.objects.create(
        key=settings.Q_CLUSTER["name"],
        payload="x",
        lock=timezone.now()
        - timezone.timedelta(seconds=settings.MEMORY_JOB_STALE_AFTER_SECONDS + 5),
    )
    depth = line(doctor(expect_exit=1), "queue depth")
    assert depth.startswith("✗") and "1 waiting" in depth and "Q_WORKERS" in depth


MANIFEST_STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}


def test_static_files_not_collected_or_stale_show_a_cross(tmp_path: Path) -> None:
    with override_settings(STORAGES=MANIFEST_STORAGES, STATIC_ROOT=tmp_path):
        missing = check_static_files()
        assert not missing.ok and "not collected" in missing.detail
        assert "collectstatic" in missing.hint
        # A manifest from an older release: one file only, the new ones absent.
        (tmp_path / "web").mkdir()
        (tmp_path / "web" / "chat.0123456789ab.js").write_text("//")
        (tmp_path / "staticfiles.json").write_text(
            json.dumps({"version": "1.1", "paths": {"web/chat.js": "web/chat.0123456789ab.js"}})
        )
        stale = check_static_files()
    assert not stale.ok and "not collected" in stale.detail and "collectstatic" in stale.hint


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_a_healthy_installation_passes_and_a_stopped_worker_is_noticed(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-healthy-Zq81")
    make_teacher(tenant_name="体检学校", username="doc")  # the offline demo provider
    make_provider(name="fake", base_url=fake_llm.base_url, api_key_env=KEY_VAR)
    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        # The first heartbeat is written while the cluster is still starting (0 workers).
        wait_until(
            lambda: "1 worker(s)" in check_worker().detail,
            timeout=60,
            what="the worker's heartbeat with its worker up",
        )
        output = doctor()
        assert "✗" not in output, output
        results = by_name(doctor_run())
        assert set(results) >= {
            "database",
            "migrations",
            "queue broker",
            "worker",
            "queue depth",
            "tokenizer",
            "static files",
            "message catalogues",
            "time zone",
            "provider fake",
        }
        assert "1 worker(s)" in results["worker"].detail
        assert "sk-healthy" not in output
    finally:
        cluster.stop()
    # The heartbeat expires within seconds of the cluster's end.
    wait_until(lambda: not check_worker().ok, timeout=30, what="the heartbeat to expire")
    assert line(doctor(expect_exit=1), "worker").startswith("✗")


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_redis_broker_fails_fast_with_a_hint() -> None:
    """A doctor process configured for a Redis nobody listens on (settings are read at
    start, so it runs as its own process on the test database)."""
    url = f"redis://:pw-Zq81@127.0.0.1:{unused_port()}/0"
    # The timeout is the test of "fast": probes are bounded (ops.doctor.PROBE_TIMEOUT).
    result = doctor_process(Q_BROKER_URL=url)
    assert result.returncode == 1
    broker = line(result.stdout, "queue broker")
    assert broker.startswith("✗") and "Q_BROKER_URL" in broker
    assert line(result.stdout, "worker").startswith("✗")
    assert "pw-Zq81" not in result.stdout + result.stderr  # the URL's password


@pytest.mark.django_db
def test_the_limits_store_in_the_database_passes() -> None:
    result = by_name(doctor_run())["limits store"]
    assert result.ok and "agents_rate_bucket" in result.detail


def test_an_unreachable_redis_limits_store_fails_with_a_hint() -> None:
    url = f"redis://:pw-Lm27@127.0.0.1:{unused_port()}/4"
    result = doctor_process(LIMITS_CACHE_URL=url)
    assert result.returncode == 1
    limits = line(result.stdout, "limits store")
    assert limits.startswith("✗") and "LIMITS_CACHE_URL" in limits
    assert "pw-Lm27" not in result.stdout + result.stderr
