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


# -- query_weights: the first occurrences summed as one multiplication -------------------
def _query_weights_reference(
    texts: list[str], *, decay: float, turn_weights: list[float] | None, saturation: float
) -> dict[str, float]:
    """query_weights as it was written before: one addition per occurrence."""
    counts: dict[str, float] = {}
    kinds: dict[str, float] = {}
    age_weight = 1.0
    for position in range(len(texts) - 1, -1, -1):
        weight = age_weight * (1.0 if turn_weights is None else turn_weights[position])
        age_weight *= decay
        if weight <= 0.0:
            continue
        for term, term_weight in weighted_terms(texts[position]):
            counts[term] = counts.get(term, 0.0) + weight
            kinds[term] = max(kinds.get(term, 0.0), term_weight)
    out: dict[str, float] = {}
    for term, x in counts.items():
        value = (saturation + 1.0) * x / (saturation + x) if saturation > 0 else min(x, 1.0)
        out[term] = value * kinds[term]
    return out


_POSITIVE = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@given(_POSITIVE)
def test_two_or_three_additions_from_zero_equal_one_multiplication(weight: float) -> None:
    assert 0.0 + weight == weight * 1
    assert 0.0 + weight + weight == weight * 2
    assert 0.0 + weight + weight + weight == weight * 3


_TURN = st.lists(
    st.one_of(_PIECES, st.sampled_from(["试卷", "试卷试卷试卷试卷", "题 题 题"])), max_size=12
).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(_TURN, min_size=1, max_size=6),
    decay=st.sampled_from([1.0, 0.8, 0.6, 0.0]),
    weights=st.lists(
        st.sampled_from([1.0, 0.3, 0.25, 0.6, 0.36, 0.15, 0.0]), min_size=6, max_size=6
    ),
    saturation=st.sampled_from([1.0, 0.0, 1.2]),
)
def test_query_weights_equal_one_addition_per_occurrence(
    texts: list[str], decay: float, weights: list[float], saturation: float
) -> None:
    turn_weights = weights[: len(texts)]
    got = tokenize.query_weights(
        texts, decay=decay, turn_weights=turn_weights, saturation=saturation
    )
    expected = _query_weights_reference(
        texts, decay=decay, turn_weights=turn_weights, saturation=saturation
    )
    assert list(got.items()) == list(expected.items())  # same floats, same order
