from __future__ import annotations

import pytest

from tests.factories import Teacher, make_teacher
from tests.fakellm_fixtures import fake_llm  # noqa: F401


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
