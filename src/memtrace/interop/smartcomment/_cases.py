"""Cases of an imported smartcomment graph: MemTraceBench annotations, or the graph's own judge ops.

MemTraceBench keeps one annotation per failed question at `data.annotations`. A raw graph has
no annotations; its questions are found the way the paper's code finds them: every operation
named `llm-judge` (category `evaluation`) whose subgraph holds nodes of class `query`,
`prediction`, `golden_answers`, `judge_response` and a float `judge_score`.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ...errors import FormatError
from ...graph.model import JUDGE_OP_NAME, QUERY_VAR, Annotation, Case
from ...vocabulary import CaseVerdict, ErrorType
from .._common import answer_list, unquote, vocabulary_word

MEMTRACEBENCH_AUTHOR = "memtracebench"
JUDGE_CATEGORY = "evaluation"
_JUDGE_CLASSES = ("judge_score", "query", "prediction", "golden_answers", "judge_response")


def _unique(case_id: str, seen: dict[str, int]) -> str:
    """Case ids are unique per run; a repeated id gets `#2`, `#3` (content-identified nodes repeat)."""
    count = seen.get(case_id, 0) + 1
    seen[case_id] = count
    return case_id if count == 1 else f"{case_id}#{count}"


def _check(value: Any, types: tuple[type, ...], where: str, key: str, path: str, required: bool) -> Any:
    if value is None and not required:
        return None
    if not isinstance(value, types) or isinstance(value, bool):
        expected = " or ".join(t.__name__ for t in types)
        problem = "is missing" if value is None else f"must be {expected}, not {type(value).__name__}"
        raise FormatError(path, f"{where}: '{key}' {problem}")
    return value


def annotation_cases(
    run_id: str, annotations: Sequence[Any], path: str, nodes: Collection[str] = ()
) -> tuple[list[Case], list[Annotation]]:
    """One wrong Case and one Annotation per MemTraceBench annotation (validated first).

    `nodes` are the graph's node ids: a query id among them is kept as the case's `query_var`.
    """
    cases: list[Case] = []
    labels: list[Annotation] = []
    seen: dict[str, int] = {}
    now = time.time()
    for i, raw in enumerate(annotations):
        where = f"data.annotations[{i}]"
        if not isinstance(raw, dict):
            raise FormatError(path, f"{where}: must be an object, not {type(raw).__name__}")
        query_id = _check(raw.get("query_id"), (str,), where, "query_id", path, True)
        query = _check(raw.get("query"), (str,), where, "query", path, True)
        gold = _check(raw.get("golden_answers"), (list, str), where, "golden_answers", path, False)
        prediction = _check(raw.get("prediction"), (str,), where, "prediction", path, False)
        prediction_id = _check(raw.get("prediction_id"), (str,), where, "prediction_id", path, False)
        evidence = _check(raw.get("source_evidence_ids"), (list,), where, "source_evidence_ids", path, False)
        error_type = _check(raw.get("final_error_type"), (str,), where, "final_error_type", path, False)
        op_id = _check(raw.get("final_op_id"), (str,), where, "final_op_id", path, False)
        if error_type is not None:
            error_type = vocabulary_word(ErrorType, error_type, where, "final_error_type", path)
        case_id = _unique(query_id, seen)
        metadata: dict[str, Any] = {"annotation": raw}
        if query_id in nodes:
            metadata[QUERY_VAR] = query_id
        if raw.get("golden_answers_id") is not None:
            metadata["golden_answers_id"] = raw["golden_answers_id"]
        cases.append(
            Case(
                run_id=run_id,
                id=case_id,
                question=unquote(query),
                gold=answer_list(gold),
                prediction=None if prediction is None else unquote(prediction),
                prediction_var=prediction_id,
                verdict=CaseVerdict.WRONG,
                evidence=[str(e) for e in evidence or []],
                metadata=metadata,
            )
        )
        labels.append(Annotation(run_id, case_id, error_type, op_id, None, MEMTRACEBENCH_AUTHOR, now))
    return cases, labels


def judged_cases(
    run_id: str,
    nodes: Mapping[str, dict[str, Any]],
    full_names: Mapping[str, str],
    operations: Sequence[dict[str, Any]],
    edges_by_op: Mapping[str, list[tuple[str, str]]],
) -> list[Case]:
    """Cases read from `llm-judge` operations; incomplete judge subgraphs are skipped, not guessed.

    `nodes` maps full node ids to raw node records, `full_names` full node ids to `class:name`,
    `edges_by_op` op ids to (source, target) pairs.
    """
    latest: dict[str, tuple[int, str]] = {}
    for node_id, node in nodes.items():
        name, version = full_names[node_id], node.get("version", 1)
        if name not in latest or version >= latest[name][0]:
            latest[name] = (version, node_id)
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for op in operations:
        if op.get("op_name") != JUDGE_OP_NAME or op.get("category") != JUDGE_CATEGORY:
            continue
        found: dict[str, str] = {}
        for source, target in edges_by_op.get(op["op_id"], []):
            for node_id in (source, target):
                class_name = nodes[node_id].get("class_name")
                if class_name in _JUDGE_CLASSES and class_name not in found:
                    found[class_name] = node_id
        if len(found) < len(_JUDGE_CLASSES):
            continue
        try:
            score = float(nodes[found["judge_score"]]["value"])
        except ValueError:
            continue
        query = nodes[found["query"]]
        query_meta = query.get("metadata") if isinstance(query.get("metadata"), dict) else {}
        names = query_meta.get("evidence") if isinstance(query_meta.get("evidence"), list) else []
        evidence = [latest[str(n)][1] for n in names if str(n) in latest]
        missing = [str(n) for n in names if str(n) not in latest]
        category = query_meta.get("category")
        metadata: dict[str, Any] = {
            "derived_from": JUDGE_OP_NAME,
            "judge_op": op["op_id"],
            "golden_answers_id": found["golden_answers"],
            "judge_response": nodes[found["judge_response"]]["value"],
            QUERY_VAR: found["query"],
        }
        if query_meta:
            metadata["query_metadata"] = query_meta
        if missing:
            metadata["missing_evidence"] = missing
        cases.append(
            Case(
                run_id=run_id,
                id=_unique(found["query"], seen),
                question=unquote(query["value"]),
                gold=answer_list(nodes[found["golden_answers"]]["value"]),
                prediction=unquote(nodes[found["prediction"]]["value"]),
                prediction_var=found["prediction"],
                verdict=CaseVerdict.WRONG if score == 0.0 else CaseVerdict.CORRECT,
                score=score,
                evidence=evidence,
                category=None if category is None else str(category),
                metadata=metadata,
            )
        )
    return cases


def merge_cases(labelled: list[Case], judged: list[Case]) -> list[Case]:
    """Annotated cases first (they carry the labels), then every judged question not annotated.

    A graph's judge steps see every question, its annotations only the failed ones: without the
    correctly answered ones an annotated run would read as 0% accurate. A judged case that an
    annotation covers lends it the judge's score, category and judge step.
    """
    by_query = {c.metadata.get(QUERY_VAR): c for c in judged if c.metadata.get(QUERY_VAR)}
    covered: set[str] = set()
    for case in labelled:
        match = by_query.get(case.metadata.get(QUERY_VAR))
        if match is None:
            continue
        covered.add(match.metadata[QUERY_VAR])
        case.score = match.score if case.score is None else case.score
        case.category = case.category or match.category
        case.metadata.setdefault("judge_op", match.metadata.get("judge_op"))
    return [*labelled, *(c for c in judged if c.metadata.get(QUERY_VAR) not in covered)]


_CASE_FIELDS = (
    "id",
    "question",
    "gold",
    "prediction",
    "prediction_var",
    "verdict",
    "score",
    "evidence",
    "category",
    "metadata",
)


def case_record(case: Case) -> dict[str, Any]:
    """A native case as JSON for the exported graph's `metadata.memtrace.cases`."""
    return {key: getattr(case, key) for key in _CASE_FIELDS}


def native_cases(run_id: str, records: Any, path: str) -> list[Case]:
    """The cases memtrace wrote into its own export (`metadata.memtrace.cases`), validated."""
    if not isinstance(records, list):
        raise FormatError(path, f"metadata.memtrace.cases: must be a list, not {type(records).__name__}")
    cases = []
    for i, raw in enumerate(records):
        where = f"metadata.memtrace.cases[{i}]"
        if not isinstance(raw, dict):
            raise FormatError(path, f"{where}: must be an object, not {type(raw).__name__}")
        _check(raw.get("id"), (str,), where, "id", path, True)
        _check(raw.get("question"), (str,), where, "question", path, True)
        for key, types in (("gold", (list,)), ("evidence", (list,)), ("metadata", (dict,))):
            _check(raw.get(key), types, where, key, path, False)
        _check(raw.get("score"), (int, float), where, "score", path, False)
        for key in ("prediction", "prediction_var", "verdict", "category"):
            _check(raw.get(key), (str,), where, key, path, False)
        fields = {key: raw.get(key) for key in _CASE_FIELDS}
        if fields["verdict"] is not None:
            fields["verdict"] = vocabulary_word(CaseVerdict, fields["verdict"], where, "verdict", path)
        for key, empty in (("gold", []), ("evidence", []), ("metadata", {})):
            fields[key] = fields[key] if fields[key] is not None else empty
        cases.append(Case(run_id=run_id, **fields))
    return cases
