"""Tests that need the shared development data fail without it, unless explicitly allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.devdata import ALLOW_MISSING, dev_data, require_dev_data


def test_missing_data_fails_the_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    with pytest.raises(pytest.fail.Exception, match="shared development data is missing"):
        require_dev_data(tmp_path / "absent")


def test_missing_data_is_skipped_only_when_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_MISSING, "1")
    with pytest.raises(pytest.skip.Exception):
        require_dev_data(tmp_path / "absent")


def test_present_data_is_returned(tmp_path: Path) -> None:
    assert require_dev_data(tmp_path) == tmp_path


def test_the_shared_data_is_here() -> None:
    """The suite's data-driven tests read these folders (CI must provide them)."""
    require_dev_data(dev_data() / "injection-dev")
