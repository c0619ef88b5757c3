"""``terms`` (what entries and chunks store) is ``weighted_terms`` without the weights.

``terms`` has its own path, without the word boundaries a query's weights need. Stored
terms must not change (``TERMS_VERSION`` says when they do), so both paths must give the
same terms in the same order for any text: the table tests' rows, a property over
arbitrary mixes of the scripts and characters the tokenizer treats apart, the shared
development dialogues, and both with and without the segmenter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memory.recall.tokenize as tokenize
from memory.recall.tokenize import STOP_TERMS, terms, weighted_terms
from tests.devdata import dev_data, require_dev_data


def _weighted_path(text: str) -> list[str]:
    return [term for term, _ in weighted_terms(text)]


@pytest.fixture(params=["rjieba", "bigrams alone"])
def segmenter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.param == "bigrams alone":
        monkeypatch.setattr(tokenize, "_segment", None)


_PIECES = st.sampled_from(
    [
        "光合作用",
        "数据结构",
        "的",
        "我们",
        "上次",
        "一下",
        "诗",
        "ｶﾀｶﾅ",
        "한국어",
        "Python",
        "ＡＢＣ１２３",
        "questions",
        "don't",
        "x²",
        "①",
        "3.14",
        "\u200b",
        "\ufeff",
        "，",
        "。",
        " ",
        "\n",
        "_",
        "𠀀𠀁",  # extension B
        "豈",  # compatibility ideograph
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=24).map("".join),
)
def test_terms_equal_the_weighted_path_for_any_text(text: str) -> None:
    assert terms(text) == _weighted_path(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "诗",
        "的",
        "的的的",
        "出一份光合作用测验，像上次那样",
        "二叉树二叉树 binary trees",
        "第２章：Linked Lists（共３题）",
        "期中考试数学九十出头，语文不及格要补考",
    ],
)
def test_terms_equal_the_weighted_path_with_and_without_the_segmenter(
    text: str, segmenter: None
) -> None:
    assert terms(text) == _weighted_path(text)


def test_words_the_segmenter_finds_are_never_stop_terms() -> None:
    # Words need three characters; the stop list has none that long in CJK, so the
    # filter on words is a guard, not a change of output (both paths keep it).
    assert all(len(term) <= 2 for term in STOP_TERMS if tokenize.is_cjk_term(term))


def _dialogue_texts() -> Iterator[str]:
    root = require_dev_data(dev_data() / "recall-dev")
    for path in sorted(root.glob("madial/*/MADial-Bench-*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():  # one JSON value a line
            if line.strip():
                yield from _strings(json.loads(line))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_terms_equal_the_weighted_path_on_the_development_dialogues() -> None:
    texts = [text for text in _dialogue_texts() if text.strip()][:5000]
    assert len(texts) >= 500
    assert [terms(text) for text in texts] == [_weighted_path(text) for text in texts]
