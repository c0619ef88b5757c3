"""The read path's token bounds: rendered sections and the ledger never exceed their caps."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents.tokens import count_tokens, count_tokens_many
from memory import boundary
from memory.ledger import Ledger
from memory.render import Item, Turn, count_line, list_line, list_lines, render_list, render_thread
from memory.sanitizer import sanitize_history

CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
TEXT = st.one_of(
    st.text(max_size=400),
    st.text(alphabet=CJK, max_size=3000),
    st.builds(
        lambda s, n: s * n, st.text(alphabet=CJK, min_size=1, max_size=30), st.integers(1, 400)
    ),
)


@st.composite
def turns(draw: st.DrawFn) -> list[Turn]:
    count = draw(st.integers(0, 3))
    return [
        Turn(run_id=i + 1, user=draw(TEXT), assistant=draw(st.one_of(st.none(), TEXT)))
        for i in range(count)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    summary=TEXT,
    history=turns(),
    budget=st.integers(0, 2500),
    summary_cap=st.integers(0, 800),
    recent_cap=st.integers(0, 1500),
)
def test_thread_section_never_exceeds_its_budget(
    summary: str, history: list[Turn], budget: int, summary_cap: int, recent_cap: int
) -> None:
    rendered = render_thread(
        summary=summary,
        turns=history,
        budget=budget,
        summary_cap=summary_cap,
        recent_cap=recent_cap,
    )
    assert rendered.tokens == count_tokens(rendered.text)
    assert rendered.tokens <= budget
    if rendered.text:
        # Header and footer are never cut.
        assert rendered.text.startswith(boundary.THREAD_HEADER + "\n")
        assert rendered.text.endswith("\n" + boundary.THREAD_FOOTER)
        assert rendered.text.count(boundary.THREAD_FOOTER) == 1
        assert rendered.parts["summary"] <= summary_cap
        assert rendered.parts["recent"] <= recent_cap


@settings(max_examples=40, deadline=None)
@given(user=st.text(alphabet=CJK, min_size=1, max_size=20000), older=TEXT)
@example(user="用户本轮的真实请求", older="")
def test_latest_user_turn_is_always_kept(user: str, older: str) -> None:
    history = [Turn(1, older, older), Turn(2, user, "回复" * 2000)]
    rendered = render_thread(
        summary="摘要" * 2000, turns=history, budget=2000, summary_cap=600, recent_cap=1200
    )
    latest = rendered.text.rsplit(boundary.USER_MARK, 1)[1]
    # The turn is shown as the sanitizer leaves it: CJK text that spells the boundary's
    # own lines (用户本轮的真实请求) is neutralised there, by design.
    assert latest.strip().startswith(sanitize_history(user).strip()[:10])
    assert rendered.tokens <= 2000


def test_failed_turn_is_a_placeholder_and_running_turns_never_render() -> None:
    rendered = render_thread(
        summary="",
        turns=[Turn(1, "出一份试卷", None), Turn(2, "再出一份", "好的")],
        budget=2000,
        summary_cap=600,
        recent_cap=1200,
    )
    lines = rendered.text.splitlines()
    assert f"{boundary.ASSISTANT_MARK} {boundary.FAILED_TURN}" in lines
    assert lines[0] == boundary.THREAD_HEADER and lines[-1] == boundary.THREAD_FOOTER
    assert boundary.RECENT_LABEL in lines


def test_older_text_is_cut_first() -> None:
    rendered = render_thread(
        summary="很早以前的摘要。" * 300,
        turns=[
            Turn(1, "较早的问题" * 200, "较早的回答" * 300),
            Turn(2, "最新的问题", "最新的回答"),
        ],
        budget=600,
        summary_cap=600,
        recent_cap=1200,
    )
    assert "最新的问题" in rendered.text and "最新的回答" in rendered.text
    assert rendered.truncated
    assert rendered.tokens <= 600


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(TEXT, max_size=40), budget=st.integers(0, 800))
def test_list_sections_never_exceed_their_budget(texts: list[str], budget: int) -> None:
    rendered = render_list(
        header=boundary.CORE_HEADER,
        footer=boundary.CORE_FOOTER,
        items=[Item(i, t) for i, t in enumerate(texts)],
        budget=budget,
        item_cap=150,
    )
    assert rendered.tokens == count_tokens(rendered.text) <= budget


# Line texts as sections hold them: CJK, ASCII, emoji (with modifiers and joiners),
# punctuation that the encoder merges with a following line break, and whitespace of
# every kind, inside the line and at its end.
LINE_CHARS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from(["😀", "👍🏽", "👩\u200d💻", "🇨🇳", "\ufe0f", "…", "。", "：", "《", "》", "—"]),
    st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\n\n", "\u3000", "\xa0", "\u2028"]),
    st.characters(),
)
LINE_TEXT = st.lists(LINE_CHARS, max_size=60).map("".join)
# What a line may start with: anything but whitespace (a list line starts with "- ").
LINE_START = LINE_CHARS.filter(lambda c: not c.isspace() and not c[:1].isspace())


@settings(max_examples=400, deadline=None)
@given(
    first=LINE_TEXT,
    rest=st.lists(st.tuples(LINE_START, LINE_TEXT), max_size=8),
    list_lines=st.booleans(),
)
@example(first="a。", rest=[("-", " b")], list_lines=False)
@example(first="- x ", rest=[("-", " ")], list_lines=True)
def test_a_text_of_lines_counts_as_the_sum_of_its_lines(
    first: str, rest: list[tuple[str, str]], list_lines: bool
) -> None:
    lines = [first] + [f"- {start}{body}" if list_lines else start + body for start, body in rest]
    whole = "\n".join(lines)
    assert sum(count_line(line) for line in lines[:-1]) + count_tokens(lines[-1]) == (
        count_tokens(whole)
    )


@settings(max_examples=200)
@given(
    cap=st.integers(0, 10_000),
    window=st.integers(1_000, 100_000),
    protected=st.integers(0, 120_000),
    charges=st.lists(st.integers(0, 5_000), max_size=6),
)
def test_ledger_never_exceeds_total_or_reaches_the_window(
    cap: int, window: int, protected: int, charges: list[int]
) -> None:
    ledger = Ledger.for_run(
        cap_total=cap, window_tokens=window, protected_tokens=protected, reserve=64
    )
    for i, want in enumerate(charges):
        ledger.charge(f"s{i}", ledger.grant(want))
    assert 0 <= ledger.used <= ledger.total <= cap
    assert protected + ledger.total < window or ledger.total == 0


# Enough characters in all to take the parallel path of agents.tokens.map_encoded.
BATCH = st.lists(TEXT, min_size=0, max_size=30).map(
    lambda texts: [*texts, "光合作用的光反应在类囊体薄膜上进行。" * 1200]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.one_of(st.lists(TEXT, max_size=8), BATCH))
def test_a_batch_is_counted_as_each_text_alone(texts: list[str]) -> None:
    assert count_tokens_many(texts) == [count_tokens(text) for text in texts]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.one_of(st.lists(TEXT, max_size=8), BATCH),
    cap=st.one_of(st.none(), st.integers(1, 600)),
)
@example(texts=["- 开头是破折号", "   ", "末尾\n"], cap=3)
def test_lines_made_in_a_batch_are_the_lines_made_one_by_one(
    texts: list[str], cap: int | None
) -> None:
    items = [Item(id=i, text=text) for i, text in enumerate(texts)]
    assert list_lines(items, item_cap=cap) == [list_line(item, item_cap=cap) for item in items]
