"""The optimiser's parts: grids and moves, the routing table, the bootstrap interval, the split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.datasets import sample_conversation
from memtrace.graph import Case
from memtrace.optimize import (
    OptimizeError,
    make_split,
    paired_bootstrap,
    route,
    split_conversations,
    start_config,
)
from memtrace.optimize.routing import answer_direction
from memtrace.optimize.tunables import applies, is_prompt, moves
from memtrace.systems.registry import loadable_systems, system_class
from memtrace.systems.tunables import grid, grids


def test_every_routed_tunable_is_a_config_field_with_a_grid_or_a_prompt() -> None:
    for system, cls in loadable_systems().items():
        config = cls.Config()
        for r in cls.routes:
            assert r.tunable in type(config).model_fields, (system, r.tunable)
            assert is_prompt(config, r.tunable) or grid(config, r.tunable), (system, r.tunable)


def test_every_default_setting_is_on_its_grid() -> None:
    """The search starts from the hand-chosen default and steps along the grid around it."""
    for system, cls in loadable_systems().items():
        config = cls.Config()
        for name, declared in grids(config).items():
            assert getattr(config, name) in declared.values, (system, name)


def test_moves_go_the_voted_way_first_then_the_other_way() -> None:
    rag = system_class("rag").Config
    top_k, retrieval, support = grid(rag, "top_k"), grid(rag, "retrieval"), grid(rag, "min_answer_support")
    assert top_k and retrieval and support
    assert moves(top_k, 5, +1)[:3] == [8, 10, 3]
    assert moves(top_k, 5, -1)[:3] == [3, 2, 8]
    assert moves(top_k, 5, 0)[:4] == [8, 3, 10, 2]
    assert moves(top_k, 5, -1, decisive=False)[:4] == [3, 8, 2, 10]  # a split vote tries both ways
    assert moves(retrieval, "bm25", +1) == ["hybrid"]
    assert sorted(moves(support, 0.5, 1)) == sorted(v for v in support.values if v != 0.5)
    assert 7 in moves(top_k, 7, 1) or moves(top_k, 7, 1)[0] == 8  # an off-grid start joins the grid


def test_modes_decide_which_tunables_apply() -> None:
    config = system_class("evermemos").Config()
    assert applies(config, "min_answer_support", offline=True)
    assert not applies(config, "min_answer_support", offline=False)
    assert applies(config, "answer_prompt", offline=False)
    assert not applies(config, "answer_prompt", offline=True)
    assert applies(config, "top_k", offline=True) and applies(config, "top_k", offline=False)
    assert applies(config, "extract_foresight", offline=False)
    assert not applies(config, "extract_foresight", offline=True)


def _case(gold: list[str], prediction: str) -> Case:
    return Case("r", "q", "Where?", gold=gold, prediction=prediction, verdict="wrong")


def test_answer_direction_from_the_case() -> None:
    assert answer_direction(_case(["Not mentioned in the conversation"], "Boston")) == +1
    adversarial = _case(["Boston"], "Paris")
    adversarial.category = "adversarial"
    assert answer_direction(adversarial) == +1
    assert answer_direction(_case(["Boston"], "Not mentioned in the conversation.")) == -1
    assert answer_direction(_case(["Boston"], "Paris")) == 0


def test_route_uses_the_table_the_category_and_recorded_prompts(workspace: Path, small_run: str) -> None:
    with mt.open(workspace) as ws:
        graph = ws.view(small_run)
        case = ws.cases(small_run)[0]
        ops = {op.name: op for op in graph.ops.values()}
        fields = set(system_class("rag").Config.model_fields)
        # `search` is not a rag op name: its category routes it to top_k, larger.
        (signal,) = route("rag", graph, ops["search"], "RetrievalError", case, fields)
        assert (signal.tunable, signal.direction) == ("top_k", 1)
        # A wrong span at the answer step: no threshold fixes it, the prompt may.
        assert [s.tunable for s in route("rag", graph, ops["answer"], "ResponseError", case, fields)] == [
            "answer_prompt"
        ]
        assert route("rag", graph, ops["update_memory"], "UpdateError", case, fields) == []
    with mt.run(workspace, name="prompted", system="mem0") as run:
        with mt.op("update_memory_decision", category="update") as op:
            op.input("update_prompt", "Decide ADD/UPDATE/DELETE/NONE.", category="prompt")
        run_id = run.id
    with mt.open(workspace) as ws:
        graph = ws.view(run_id)
        (op,) = graph.ops.values()
        fields = set(system_class("mem0").Config.model_fields)
        tunables = [s.tunable for s in route("mem0", graph, op, "UpdateError", case, fields)]
        assert tunables[0] == "update_prompt"  # discovered from the recorded input
        assert {"update_threshold", "duplicate_threshold", "merge_lines"} <= set(tunables)


def test_bootstrap_interval_contains_the_delta_and_is_reproducible() -> None:
    start = [i % 3 == 0 for i in range(300)]
    final = [i % 3 == 0 or i % 7 == 0 for i in range(300)]
    first = paired_bootstrap(start, final, seed=7)
    again = paired_bootstrap(start, final, seed=7)
    other = paired_bootstrap(start, final, seed=8)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low <= first.delta <= first.high
    assert first.delta == pytest.approx(sum(final) / 300 - sum(start) / 300)
    assert first.low > 0 and first.resamples == 2000 and first.level == 0.95
    same = paired_bootstrap(start, start)
    assert (same.delta, same.low, same.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_bootstrap([True], [True, False])


def test_split_is_by_dataset_order_and_seeded_shuffles_reproduce() -> None:
    conversations = [sample_conversation(seed) for seed in range(5)]
    split = split_conversations(conversations, 2, 2, 1)
    assert [c.id for c in split.train] == ["sample-0", "sample-1"]
    assert [c.id for c in split.validation] == ["sample-2", "sample-3"]
    assert [c.id for c in split.holdout] == ["sample-4"]
    shuffled = split_conversations(conversations, 2, 2, 1, seed=3)
    assert shuffled.describe() == split_conversations(conversations, 2, 2, 1, seed=3).describe()
    ids = [c.id for part in (shuffled.train, shuffled.validation, shuffled.holdout) for c in part]
    assert sorted(ids) == sorted(c.id for c in conversations)


def test_sample_means_as_many_seeded_conversations_as_the_split_needs() -> None:
    split = make_split("sample", 2, 1, 1, questions=3)
    assert [c.id for c in split.train + split.validation + split.holdout] == [f"sample-{i}" for i in range(4)]
    assert all(len(c.questions) == 3 for c in split.train)


def test_too_few_conversations_is_one_line_naming_the_file(tmp_path: Path) -> None:
    source = tmp_path / "two.json"
    source.write_text(json.dumps([_locomo_conversation(i) for i in range(2)]))
    with pytest.raises(OptimizeError) as caught:
        make_split(f"locomo:{source}", 4, 2, 2)
    message = str(caught.value)
    assert "\n" not in message and str(source) in message and "need 8" in message


def test_a_bad_start_override_is_one_line() -> None:
    with pytest.raises(OptimizeError, match="top_kk"):
        start_config("rag", {"top_kk": 3})
    assert start_config("rag", {"top_k": 3}).top_k == 3


def _locomo_conversation(i: int) -> dict:
    """A minimal LoCoMo record: one session of two turns and one question."""
    return {
        "sample_id": f"conv-{i}",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice!"},
            ],
        },
        "qa": [{"question": "Where did Ann move?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4}],
    }
