"""Test settings: the production module with the environment a test run needs.

django-q2 reads Q_CLUSTER once at import, so sync mode is chosen here, through the
environment, before config.settings is imported (override_settings cannot switch it).
Tests that need a real cluster start a separate ``qcluster`` process with
config.settings and Q_SYNC=0.
"""

import os

os.environ.setdefault("Q_SYNC", "1")
os.environ.setdefault("OFFLINE_STREAM_DELAY", "0")
# A queue and heartbeat name of this pytest process's own: the real-cluster tests' child
# processes inherit it, and parallel runs on one Redis (Q_BROKER_URL) never see each
# other's tasks or workers.
os.environ.setdefault("Q_NAME", f"agent-memory-test-{os.getpid()}")

from config.settings import *  # noqa: F403

# Fast hashing: tests create many users; production keeps Django's default.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The plain storage whatever DEBUG says: tests render pages without a collectstatic (the
# manifest storage would refuse). The production path is tested by tests/test_serving.py
# and scripts/check-prod-install.sh.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# A file, not an in-memory database, so that the real-cluster tests can share it with a
# qcluster subprocess. One file per pytest process: parallel sessions never collide.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.environ.get("SQLITE_TEST_NAME")
        or os.path.join(tempfile.gettempdir(), f"agent-memory-test-{os.getpid()}.sqlite3")
    }
