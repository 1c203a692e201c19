"""Unicode-aware tokenisation shared by BM25, the hashing embedder and evidence location.

The paper's code kept only ASCII letters and digits, so a conversation in French, Hindi or Chinese
lost most of its words. Here a token is a run of letters, digits and combining marks of any script,
NFKC-normalised and casefolded. Han and kana characters become one token each: those scripts do not
separate words by spaces, and single characters are what a lexical index can match reliably without
a word segmenter. Thai, Lao, Khmer and Myanmar runs stay whole (no segmenter either): a known limit.
English stemming (Porter) is optional; it leaves non-ASCII words alone.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

from .stem import porter_stem

#: Characters that each make a token of their own: CJK ideographs (with extensions) and kana.
CJK_CHARS = (
    "\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana, Han
    "\U00020000-\U0003134f"  # Han extensions B-H
)
_CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
_CJK_SPLIT = re.compile(f"[{CJK_CHARS}]|[^{CJK_CHARS}]+")


def split_cjk(word: str) -> list[str]:
    """A word with Han or kana characters split so each of those is a token of its own."""
    return _CJK_SPLIT.findall(word) if _CJK_CHAR.search(word) else [word]


#: A small English stopword list (NLTK-like, with contraction fragments left by tokenisation).
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before being
    below between both but by can couldn d did didn do does doesn doing don down during each few for
    from further had hadn has hasn have haven having he her here hers herself him himself his how i if
    in into is isn it its itself just ll m ma me mightn more most mustn my myself needn no nor not now o
    of off on once only or other our ours ourselves out over own re s same shan she should shouldn so
    some such t than that the their theirs them themselves then there these they this those through to
    too under until up ve very was wasn we were weren what when where which while who whom why will with
    won wouldn y you your yours yourself yourselves
    """.split()  # noqa: SIM905
)


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    """Letters and digits (`[^\\W_]`) plus every combining mark, built once on first use.

    Python's `\\w` leaves out combining marks, which split Devanagari or decomposed Latin words
    apart. Scanning the planes that hold marks takes ~30 ms, so it is done lazily, not at import.
    """
    ranges: list[tuple[int, int]] = []
    for cp in (*range(0x20000), *range(0xE0000, min(0xE1000, sys.maxunicode + 1))):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    marks = "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges)
    return re.compile(f"(?:[^\\W_]|[{marks}])+")


def tokenize(text: str, *, stopwords: bool = False, stem: bool = False) -> list[str]:
    """Split text into casefolded word tokens of any script; drop English stopwords, stem, when asked.

    >>> tokenize("Café in 北京, naïve?")
    ['café', 'in', '北', '京', 'naïve']
    """
    if not text:
        return []
    normalised = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    for run in _token_pattern().findall(normalised):
        tokens.extend(split_cjk(run))
    if stopwords:
        tokens = [t for t in tokens if t not in ENGLISH_STOPWORDS]
    if stem:
        tokens = [porter_stem(t) for t in tokens]
    return tokens


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def sentences(text: str) -> list[str]:
    """The sentences of a text: split after '.', '!' or '?' where a capital or a quote starts the next."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]
