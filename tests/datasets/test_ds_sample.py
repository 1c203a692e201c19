"""The bundled sample conversation: deterministic, covering, and every gold answer literal in its evidence."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from dshelpers import derivable

from memtrace.datasets import NOT_MENTIONED, sample_conversation

SEEDS = range(12)
CATEGORIES = {"single-hop", "multi-hop", "temporal", "knowledge-update", "unanswerable"}


def test_same_seed_same_conversation() -> None:
    assert sample_conversation(3) == sample_conversation(3)
    assert sample_conversation() == sample_conversation(0)
    assert repr(sample_conversation(5)) == repr(sample_conversation(5))


def test_seeds_vary_the_details() -> None:
    convs = [sample_conversation(seed) for seed in SEEDS]
    assert len({tuple(c.speakers) for c in convs}) > 6
    assert len({c.sessions[0].date for c in convs}) == len(convs)
    assert len({c.questions[0].answers[0] for c in convs}) > 3  # the dog's name
    assert all(c.id == f"sample-{seed}" for seed, c in zip(SEEDS, convs, strict=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_shape(seed: int) -> None:
    conv = sample_conversation(seed)
    assert conv.source == "sample" and len(conv.speakers) == 2 and conv.speakers[0] != conv.speakers[1]
    assert len(conv.sessions) >= 4
    assert [s.index for s in conv.sessions] == list(range(1, len(conv.sessions) + 1))
    whens = [s.when for s in conv.sessions]
    assert all(isinstance(w, datetime) and w.year == 2023 for w in whens)
    assert whens == sorted(whens) and (whens[-1] - whens[0]).days >= 21  # several weeks
    assert {t.speaker for t in conv.turns()} == set(conv.speakers)
    ids = [t.dia_id for t in conv.turns()]
    assert len(ids) == len(set(ids)) and all(t.dia_id.startswith(f"D{t.session}:") for t in conv.turns())
    assert any(t.image_caption for t in conv.turns())


@pytest.mark.parametrize("seed", SEEDS)
def test_questions(seed: int) -> None:
    conv = sample_conversation(seed)
    qs = conv.questions
    assert len(qs) >= 20 and len({q.id for q in qs}) == len(qs)
    counts = Counter(q.category for q in qs)
    assert set(counts) == CATEGORIES and min(counts.values()) >= 4
    assert all(q.evidence for q in qs) and conv.broken_evidence() == []
    for q in qs:
        assert q.unanswerable == (q.category == "unanswerable")
        assert q.answers == [NOT_MENTIONED] or derivable(conv, q), (q.question, q.answers, q.evidence)


@pytest.mark.parametrize("seed", SEEDS)
def test_knowledge_updates_follow_the_old_fact(seed: int) -> None:
    conv = sample_conversation(seed)
    for q in (q for q in conv.questions if q.category == "knowledge-update"):
        old, new = conv.evidence_turns(q)
        assert old.session < new.session
        assert derivable(conv, q) and q.answers[0] not in old.text  # the old turn alone does not answer
    texts = " ".join(t.text for t in conv.turns())
    assert "I quit the band" in texts and "I just moved to" in texts and "I started a new job" in texts


def test_unanswerable_answers_are_really_absent() -> None:
    conv = sample_conversation(0)
    a, b = conv.speakers
    own = {t.speaker: " ".join(x.text for x in conv.turns() if x.speaker == t.speaker) for t in conv.turns()}
    assert "dog named" in own[a] and "dog named" not in own[b]
    assert "cat named" in own[b] and "cat named" not in own[a]
    assert "vacation" in own[b] and "vacation" not in own[a]


def test_facts_map_to_turns() -> None:
    conv = sample_conversation(1)
    facts = conv.metadata["facts"]
    assert {"a_move", "a_quit", "a_job2", "b_cat"} <= set(facts)
    assert all(conv.turn(dia_id) is not None for dia_id in facts.values())
    move = conv.turn(facts["a_move"])
    assert move is not None and "moved to" in move.text


def test_the_derivability_check_catches_wrong_gold() -> None:
    conv = sample_conversation(0)
    by_category = {q.category: q for q in conv.questions}
    single, temporal = by_category["single-hop"], by_category["temporal"]
    single.answers = ["Atlantis"]
    temporal.answers = ["1 January 2023"]
    assert not derivable(conv, single) and not derivable(conv, temporal)
