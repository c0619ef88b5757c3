"""Build ``memory/redline/data/surname_chars.txt``: the characters that open many
person names in jieba's dictionary (MIT; the ``jieba`` package of the ``bench`` extra).

A character is kept when at least ``MIN_NAMES`` three-character words of the dictionary
that start with it are tagged ``nr`` (a person's name), and those are at least
``MIN_SHARE`` of the dictionary's words of two or more characters that start with it:
张, 谢, 程 (張三-like names are most of their words) but not 大 or 有 (names are a small
share of their words). A statistic of the segmenter's own data, not a list grown by
hand; the red line's persons module reads it (``memory/redline/persons.py``).

    .venv/bin/python benchmarks/data/build_surname_chars.py
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import jieba

MIN_NAMES = 40
MIN_SHARE = 0.15
OUT = Path(__file__).resolve().parents[2] / "memory" / "redline" / "data" / "surname_chars.txt"


def main() -> None:
    names: Counter[str] = Counter()
    words: Counter[str] = Counter()
    with (Path(jieba.__file__).parent / "dict.txt").open(encoding="utf-8") as dictionary:
        for line in dictionary:
            word, _freq, tag = line.split()
            if len(word) < 2:
                continue
            words[word[0]] += 1
            if tag == "nr" and len(word) == 3:
                names[word[0]] += 1
    kept = sorted(
        (c for c, n in names.items() if n >= MIN_NAMES and n / words[c] >= MIN_SHARE),
        key=lambda c: (-names[c], c),
    )
    header = (
        "# Characters that open many person names in jieba's dictionary (MIT), most names\n"
        f"# first: >= {MIN_NAMES} three-character nr words, >= {MIN_SHARE:.0%} of the words\n"
        "# starting with the character. Built by benchmarks/data/build_surname_chars.py.\n"
    )
    OUT.write_text(header + "".join(f"{c}\n" for c in kept), encoding="utf-8")
    print(f"{len(kept)} characters -> {OUT}")


if __name__ == "__main__":
    main()
