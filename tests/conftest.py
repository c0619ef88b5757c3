from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory.services.kb import kb_cache_clear
from memory.services.recall import recall_cache_clear
from tests.factories import Teacher, make_teacher
from tests.fakellm_fixtures import fake_llm  # noqa: F401


@pytest.fixture(autouse=True)
def _fresh_index_caches() -> Iterator[None]:
    """Each test's database starts empty and may reuse ids: so must the process's
    in-memory indexes."""
    yield
    recall_cache_clear()
    kb_cache_clear()


@pytest.fixture
def teacher(db: None) -> Teacher:
    return make_teacher(tenant_name="第一中学", username="zhang")


@pytest.fixture
def colleague(teacher: Teacher) -> Teacher:
    """Another teacher of the same school, using the same agent."""
    return make_teacher(tenant_name=teacher.tenant.name, username="li", agent=teacher.agent)


@pytest.fixture
def outsider(db: None) -> Teacher:
    """A teacher of another school."""
    return make_teacher(tenant_name="第二中学", username="wang")
