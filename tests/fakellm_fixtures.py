"""Pytest fixtures for :mod:`tests.fakellm`.

Import them into a conftest: ``from tests.fakellm_fixtures import fake_llm  # noqa: F401``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakellm import FakeLLMServer


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` (mode ``ok``), stopped after the test."""
    with FakeLLMServer() as server:
        yield server
