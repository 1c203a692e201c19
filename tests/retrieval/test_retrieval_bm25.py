"""BM25 over our tokens: ranking on a toy corpus, incremental adds, and edge cases that must not crash."""

from __future__ import annotations

import pytest

from memtrace.retrieval import BM25Index, Hit, Index, tokenize

CORPUS = [
    "Caroline moved to Boston last May.",
    "Melanie paints sunsets with her kids.",
    "Caroline went hiking in the mountains near Boston.",
    "Jon lost his job as a banker and opened a dance studio.",
    "Gina's dance studio opened in Paris.",
]


def test_the_document_with_the_rarest_shared_terms_ranks_first() -> None:
    index = BM25Index(CORPUS)
    hits = index.search("Who opened a dance studio after losing a banker job?", k=3)
    assert [h.index for h in hits][:2] == [3, 4]
    assert hits[0].score > hits[1].score > 0
    assert index.search("painting sunsets", k=1)[0].index == 1


def test_hits_are_sorted_by_score_then_index() -> None:
    index = BM25Index(["red apple", "green pear", "red apple", "red apple pie"])
    hits = index.search("apple", k=10)
    assert [h.index for h in hits] == [0, 2, 3]  # 0 and 2 tie; 3 is longer, so lower
    assert hits[0].score == hits[1].score > hits[2].score
    assert all(isinstance(h, Hit) for h in hits)


def test_k_limits_and_larger_k_returns_only_matching_documents() -> None:
    index = BM25Index(CORPUS)
    assert len(index.search("Caroline", k=1)) == 1
    assert [h.index for h in index.search("Caroline", k=100)] == [0, 2]
    assert index.search("Caroline", k=0) == []


def test_empty_corpus_empty_query_and_unknown_tokens_return_nothing() -> None:
    assert BM25Index().search("anything", k=5) == []
    index = BM25Index(CORPUS)
    assert index.search("", k=5) == []
    assert index.search("?!", k=5) == []
    assert index.search("the and of", k=5) == []  # stopwords only
    assert index.search("zebra xylophone", k=5) == []


def test_adds_are_searchable_and_keep_positions() -> None:
    index = BM25Index()
    assert len(index) == 0
    index.add(CORPUS[:2])
    assert index.search("Boston", k=5) == [Hit(0, index.search("Boston", k=5)[0].score)]
    index.add(CORPUS[2:])
    assert len(index) == 5
    assert [h.index for h in index.search("Boston", k=5)] == [0, 2]
    assert index.documents == CORPUS
    index.add([])
    assert len(index) == 5


def test_empty_documents_are_indexed_without_matching() -> None:
    index = BM25Index(["", "Boston", "   "])
    assert [h.index for h in index.search("Boston", k=5)] == [1]


def test_unicode_queries_match_unicode_documents() -> None:
    index = BM25Index(["我喜欢北京的秋天", "Café de Flore à Paris", "東京タワー"])
    assert index.search("北京", k=1)[0].index == 0
    assert index.search("cafe CAFÉ", k=1)[0].index == 1
    assert index.search("東京", k=1)[0].index == 2


def test_default_tokens_are_stemmed_so_word_forms_match() -> None:
    index = BM25Index(CORPUS)
    assert [h.index for h in index.search("hike", k=5)] == [2]
    assert [h.index for h in index.search("paintings", k=5)] == [1]


def test_a_custom_tokenizer_keeps_stopwords() -> None:
    index = BM25Index(["to be or not to be", "question"], tokenizer=tokenize)
    assert index.search("to be", k=5)[0].index == 0


def test_single_string_add_is_rejected() -> None:
    with pytest.raises(TypeError, match="list of texts"):
        BM25Index().add("Caroline moved")  # type: ignore[arg-type]


def test_bm25_index_satisfies_the_index_protocol() -> None:
    assert isinstance(BM25Index(), Index)
