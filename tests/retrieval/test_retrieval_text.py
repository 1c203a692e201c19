"""Tokenisation: Unicode letters, digits and marks of any script, casefolded; CJK per character."""

from __future__ import annotations

import unicodedata

from memtrace.retrieval import ENGLISH_STOPWORDS, tokenize


def test_ascii_words_are_lowercased_and_split_on_punctuation() -> None:
    assert tokenize("Caroline moved to BOSTON, in May-2023!") == [
        "caroline",
        "moved",
        "to",
        "boston",
        "in",
        "may",
        "2023",
    ]


def test_accented_words_stay_whole_and_composed_equals_decomposed() -> None:
    composed = "Café naïve résumé"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    assert tokenize(composed) == tokenize(decomposed) == ["café", "naïve", "résumé"]


def test_casefolding_goes_beyond_lower() -> None:
    assert tokenize("Straße ÉCOLE") == ["strasse", "école"]


def test_scripts_with_combining_marks_are_not_split() -> None:
    # Devanagari vowel signs are combining marks, which Python's \w leaves out.
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("Привет, мир") == ["привет", "мир"]


def test_cjk_characters_are_single_tokens_and_mixed_runs_split() -> None:
    assert tokenize("我喜欢北京") == ["我", "喜", "欢", "北", "京"]
    assert tokenize("東京タワーabc") == ["東", "京", "タ", "ワ", "ー", "abc"]
    # Hangul separates words with spaces, so words stay whole.
    assert tokenize("서울 여행") == ["서울", "여행"]


def test_digits_of_other_scripts_and_fullwidth_forms() -> None:
    assert tokenize("٣ apples") == ["٣", "apples"]
    assert tokenize("\uff21\uff22\uff23\uff11\uff12\uff13") == ["abc123"]  # NFKC folds full-width forms


def test_underscores_and_symbols_separate_tokens() -> None:
    assert tokenize("snake_case $100 a+b") == ["snake", "case", "100", "a", "b"]


def test_stopword_removal_is_optional() -> None:
    text = "Where did she go with the kids?"
    assert tokenize(text) == ["where", "did", "she", "go", "with", "the", "kids"]
    assert tokenize(text, stopwords=True) == ["go", "kids"]
    assert "the" in ENGLISH_STOPWORDS and "boston" not in ENGLISH_STOPWORDS


def test_empty_and_punctuation_only_text() -> None:
    assert tokenize("") == []
    assert tokenize(" ,.;!? ") == []


def test_optional_porter_stemming_leaves_other_scripts_alone() -> None:
    assert tokenize("Hiking trips, adopted puppies", stem=True) == ["hike", "trip", "adopt", "puppi"]
    assert tokenize("Cafés 北京", stem=True) == ["cafés", "北", "京"]
