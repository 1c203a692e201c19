"""The vocabulary: stored values stay the strings workspaces held before the enums existed."""

from __future__ import annotations

import pytest

from memtrace.attribution.model import Attribution, load_attributions, save_attribution
from memtrace.errors import WorkspaceError
from memtrace.graph import Case, Run, Store
from memtrace.graph.rows import case_row
from memtrace.vocabulary import (
    MEMORY_ERROR_TYPES,
    NON_MEMORY_ERROR_TYPES,
    CaseVerdict,
    ErrorType,
    Verdict,
)


def test_members_are_the_strings_stored_before():
    assert [str(t) for t in MEMORY_ERROR_TYPES] == [
        "ExtractionError",
        "UpdateError",
        "DeletionError",
        "RetrievalError",
        "ResponseError",
    ]
    assert list(NON_MEMORY_ERROR_TYPES) == ["AnnotationError", "JudgeError"]
    assert ErrorType.UNDETERMINED == "Undetermined" and not ErrorType.UNDETERMINED.is_memory
    assert list(Verdict) == [
        "answer-confirmed",
        "flow-confirmed",
        "by-elimination",
        "refuted",
        "not-verifiable",
    ]
    assert list(CaseVerdict) == ["correct", "wrong"]


def test_a_workspace_row_written_as_plain_strings_reads_back_as_members(tmp_path):
    store = Store(tmp_path / "ws")
    try:
        store.insert_run(Run("r", "r"))
        store.write_batch(cases=[case_row(Case("r", "q1", "Where?", verdict=CaseVerdict.WRONG))])
        save_attribution(
            store,
            Attribution(
                "r", "q1", "search#1", ErrorType.RETRIEVAL, 0.5, "why", "flow", verified=Verdict.REFUTED
            ),
            "k",
        )
        raw = store.conn.execute("SELECT error_type, verified FROM attributions").fetchone()
        assert raw == ("RetrievalError", "refuted") and type(raw[0]) is str
        (loaded,) = load_attributions(store)
        assert loaded.error_type is ErrorType.RETRIEVAL and loaded.verified is Verdict.REFUTED
        assert store.cases("r")[0].verdict is CaseVerdict.WRONG
    finally:
        store.close()


def test_a_stored_word_outside_the_vocabulary_is_a_named_workspace_error(tmp_path):
    store = Store(tmp_path / "ws")
    try:
        store.insert_run(Run("r", "r"))
        store.write_batch(cases=[case_row(Case("r", "q1", "Where?", verdict=CaseVerdict.WRONG))])
        with store.transaction() as conn:  # as a file imported before imports checked verdicts left it
            conn.execute("UPDATE cases SET verdict='maybe'")
        with pytest.raises(WorkspaceError, match="stored case verdict 'maybe' is not one of correct, wrong"):
            store.cases("r")
    finally:
        store.close()
