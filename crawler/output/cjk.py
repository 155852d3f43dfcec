"""Chinese, Japanese and Korean text in the full-text index. Pure.

FTS5's unicode61 tokenizer splits text at spaces and punctuation, and these scripts put no space
between words: a whole run of Han, kana or Hangul is one token, so a word inside it is never
found. The index therefore makes each CJK character a token of its own, and a query searches a
run of them as a phrase: a page is found by any string of one or more characters it contains, as
Lucene's StandardAnalyzer finds Han text (one token a character). Latin-script text keeps its
word tokens and diacritics folding.

A character becomes a token by a separator the tokenizer does not keep: `MARK`, U+2063 INVISIBLE
SEPARATOR (a format character MathML uses between the indices of a subscript, and web pages all
but never; one in a page's text is dropped), set between a CJK character and the letter or digit
beside it. `marked` puts the marks into text on its way into
the index; `unmarked` takes them out of what is read back (a snippet, an export), so what comes
out is the page's text as it went in. A query's terms get spaces instead (`spaced`).

`marked` runs in C (crawler/output/_cjkmark.c) where the extension was built and gives the same
answers as `python_marked` on the samples below; Python's regular expressions take 0.1 ms only to
find no CJK in a page, and over 1 ms to mark a page of Japanese, on the index writer's thread with
the GIL held.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["CJK", "MARK", "has_cjk", "marked", "python_marked", "spaced", "unmarked"]

MARK = "\u2063"
CJK = (
    "\u3005-\u3007"  # iteration mark, closing mark, ideographic zero
    "\u3040-\u30ff"  # Hiragana, Katakana (with ー)
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uff66-\uff9f"  # halfwidth Katakana
    "\U00020000-\U0003134f"  # Extensions B to G
)
"""The characters indexed one a token: Han, kana and Hangul syllables."""

_CJK = re.compile(f"[{CJK}]")
_RUN = re.compile(f"[{CJK}]+")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def python_marked(text: str) -> str:
    """`text` with `MARK` between each CJK character and the letter or digit (or other CJK
    character) beside it; a mark already in it dropped. Text without CJK comes back as it is."""
    if MARK in text:
        text = text.replace(MARK, "")  # never a mark we did not set
    if _CJK.search(text) is None:
        return text

    def mark(run: re.Match[str]) -> str:
        # Marks between the run's characters, and at either end that touches a letter or digit.
        start, end = run.span()
        before = MARK if start > 0 and text[start - 1].isalnum() else ""
        after = MARK if end < len(text) and text[end].isalnum() else ""
        return before + MARK.join(run.group()) + after

    return _RUN.sub(mark, text)


def unmarked(text: str) -> str:
    """`text` read back from the index: its marks taken out."""
    return text.replace(MARK, "") if MARK in text else text


def spaced(term: str) -> str:
    """A query term with each CJK character a word of its own (the tokenizer then reads a run of
    them as a phrase of one-character tokens, as `marked` indexed them)."""
    if _CJK.search(term) is None:
        return term
    return " ".join(_RUN.sub(lambda run: " " + " ".join(run.group()) + " ", term).split())


_SAMPLES = (
    "",
    "plain ASCII text",
    "café naïve — “quoted”",
    "Debian システムを最新に保つ。Python入門です 日本語 café 한국어를 々〆〇 ア・イ・・x",
    f"x{MARK}y 中{MARK}文 {MARK}",
    "\U00020000\U00020001a1 ｱｲｳ 豈更",
)


def _choose() -> Callable[[str], str]:
    try:
        from crawler.output._cjkmark import marked as compiled
    except ImportError:
        return python_marked
    if all(compiled(sample) == python_marked(sample) for sample in _SAMPLES):
        return compiled
    return python_marked


marked: Callable[[str], str] = _choose()
"""`python_marked`, in C where built (the module's docstring)."""
