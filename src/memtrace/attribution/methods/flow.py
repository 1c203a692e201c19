"""The flow method: follow the critical information through the graph and decide by the taxonomy.

Starting from the evidence messages, it asks of every memory unit version whether it carries the
information (a pluggable support scorer), then walks DESIGN.md's taxonomy in order:
never carried by a memory unit -> ExtractionError where the information was dropped; carried,
then gone by question time -> UpdateError or DeletionError at the change that lost it; in memory
at question time but not in the retrieved context -> RetrievalError; in the context -> ResponseError.
No LLM, a few milliseconds per case; `Undetermined` with the reason when it cannot decide.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from ...eval import says_unanswerable
from ...graph import MEMORY_ENTRY, Case, GraphQueries, VariableVersion
from ...llm import usage_scope
from ...vocabulary import ErrorType
from ..evidence.anatomy import CaseAnatomy, case_anatomy
from ..evidence.locate import dated_message, locate_evidence, run_speakers
from ..evidence.losses import live_state
from ..evidence.needs import ItemNeed, answer_needs
from ..evidence.people import turns_by_person
from ..evidence.support import (
    OverlapScorer,
    SupportScorer,
    Target,
    best_part,
    value_words,
)
from ..evidence.words import BOTH, asks_count, content_stems
from ..model import Attribution, Cost, PathRole, PathStep, undetermined
from .flow_confidence import shipped_calibration, shipped_calibration_digest
from .flow_elsewhere import held_in_context, held_jointly_in_context, held_jointly_in_memory, stated_elsewhere
from .flow_items import combine_items, elsewhere_note, suspected_annotation_error
from .flow_losses import extraction_error, loss_error, quote
from .flow_question_time import question_time_error


class _GraphFacts:
    """What the flow method derives once per graph and reuses for every case of it."""

    def __init__(self, graph: GraphQueries) -> None:
        self.memory = _memory_versions(graph)
        self.words: dict[str, tuple[frozenset[str], ...]] = {}
        self._speakers: frozenset[str] | None = None

    def speakers(self, graph: GraphQueries) -> frozenset[str]:
        """Who speaks in the run's messages ('Clara: ...'): their names are on every line they said."""
        if self._speakers is None:
            self._speakers = run_speakers(graph)
        return self._speakers

    def words_of(
        self, graph: GraphQueries, versions: list[VariableVersion]
    ) -> dict[str, tuple[frozenset[str], ...]]:
        missing = [v for v in versions if v.blob and v.blob not in self.words]
        if missing:
            values = graph.values(missing)
            for v in missing:
                self.words[v.blob] = value_words(values[v.id])  # type: ignore[index]
        return {v.id: self.words.get(v.blob, ()) if v.blob else () for v in versions}


#: How many retrieved candidates stand for the evidence when a case names none: the setting flow's
#: confidence table was measured with (its claims' settings key names it).
MEASURED_K = 8


class FlowMethod:
    """The default attribution method: deterministic, explainable, no model."""

    name = "flow"

    def __init__(
        self, scorer: SupportScorer | None = None, *, evidence: str = "auto", k: int = MEASURED_K
    ) -> None:
        self.scorer = scorer or OverlapScorer()
        self.evidence = evidence
        self.k = k
        self._facts: weakref.WeakKeyDictionary[GraphQueries, _GraphFacts] = weakref.WeakKeyDictionary()
        # The shipped confidences were measured with these settings; others keep the rules' own.
        self._calibrated = (
            type(self.scorer) is OverlapScorer
            and self.scorer.threshold == 0.5
            and evidence == "auto"
            and k == MEASURED_K
        )

    def _graph_facts(self, graph: GraphQueries) -> _GraphFacts:
        facts = self._facts.get(graph)
        if facts is None:
            facts = self._facts[graph] = _GraphFacts(graph)
        return facts

    #: Raised when the method's decisions change, so results stored by an older rule are not reused.
    RULES = 4

    def settings(self) -> dict[str, Any]:
        return {
            "rules": self.RULES,
            "scorer": getattr(self.scorer, "name", type(self.scorer).__name__),
            "threshold": self.scorer.threshold,
            "evidence": self.evidence,
            "k": self.k,
            "confidence": shipped_calibration_digest() if self._calibrated else "rules",
        }

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        started = time.perf_counter()
        with usage_scope(f"flow {case.id}") as usage:  # counts tokens when the scorer uses an LLM
            result = self._attribute(graph, case)
        if result.determined and self._calibrated:
            result.confidence = shipped_calibration().confidence(str(result.error_type), graph.run.system)
        spent = usage.usage
        result.cost = Cost(
            spent.calls, spent.input_tokens, spent.output_tokens, seconds=time.perf_counter() - started
        )
        return result

    # -- the taxonomy, in order -----------------------------------------------------------------

    def _attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        anatomy = case_anatomy(graph, case)
        if anatomy.answer_op is None:
            return undetermined(graph, case, self.name, anatomy.problem or "no answer operation found")
        if case.gold and all(says_unanswerable(g) for g in case.gold):
            op = anatomy.answer_op
            return Attribution(
                graph.run.id,
                case.id,
                op.id,
                ErrorType.RESPONSE,
                0.6,
                f"The conversation does not state this, yet {op.name} ({op.id}) answered "
                f"{quote(case.prediction or '?')} instead of abstaining.",
                self.name,
                [PathStep("op", op.id, op.seq, "answered an unanswerable question", None)],
            )
        found = locate_evidence(graph, case, method=self.evidence, k=self.k)
        if not found.versions:
            return undetermined(graph, case, self.name, found.problem or "no evidence messages found")
        if found.source != "gold":  # retrieved pseudo evidence: no items to look for elsewhere
            return self._trace(graph, case, anatomy, found.versions, found.source)
        needs = answer_needs(graph, case, found.versions, anatomy.question_seq)
        if needs.unsupported is not None:
            return suspected_annotation_error(graph, case, self.name, needs, found.versions)
        # A list answer: every item must reach the answer. An item no turn states is no reason to
        # trace the whole answer as one: the stated items are what it needs from memory.
        if len(needs.items) >= 2 or (needs.items and needs.unstated):
            traced = [
                traced for need in needs.items for traced in self._trace_item(graph, case, anatomy, need)
            ]
            return combine_items(
                graph, case, anatomy, traced, self.name, needs.unstated, needs.loosely_stated
            )
        if not needs.items and len(found.versions) >= 2 and asks_count(case.question):
            # A count no turn states ("How many dogs?": 3, from three turns) needs every turn it counts:
            # a context holding one of them is a partial carrier, as for a list. (A duration needs
            # only its two ends, and other inferences may need any one turn: those stay joint.)
            traced = [
                (
                    ItemNeed(v.name, None, frozenset(), (v,), "annotated"),
                    self._trace(graph, case, anatomy, [v], found.source),
                )
                for v in found.versions
            ]
            return combine_items(graph, case, anatomy, traced, self.name)
        shared = len(needs.items) == 1 and not needs.unstated and BOTH.search(case.question) is not None
        per_person = (
            turns_by_person(graph, case.question, found.versions) if shared or not needs.items else []
        )
        if per_person:
            # "Did Jon and Gina both compete?": an answer inferred about each person joined in the
            # question, or one fact they "both" share, needs a turn of each, as a list each item.
            traced = [
                (
                    ItemNeed(
                        f"{person} ({', '.join(v.name for v in turns)})",
                        None,
                        frozenset(),
                        turns,
                        "annotated",
                    ),
                    self._trace(graph, case, anatomy, list(turns), found.source, about=person),
                )
                for person, turns in per_person
            ]
            return combine_items(graph, case, anatomy, traced, self.name)
        if needs.items and needs.items[0].where != "annotated":  # the annotated turns do not state it
            need = needs.items[0]
            result = self._trace(graph, case, anatomy, list(need.messages), need.where)
            result.explanation = f"{elsewhere_note(need, found.versions)} {result.explanation}"
            return result
        single = needs.items[0].item if len(needs.items) == 1 else None
        annotated = {v.id for v in found.versions}
        copies = [v for v in needs.items[0].messages if v.id not in annotated] if single else []
        evidence = sorted([*found.versions, *copies], key=lambda v: v.seq)  # copies: lost with the last
        return self._trace(graph, case, anatomy, evidence, found.source, restated=single)

    def _trace_item(
        self, graph: GraphQueries, case: Case, anatomy: CaseAnatomy, need: ItemNeed
    ) -> list[tuple[ItemNeed, Attribution]]:
        """One item of a list traced through its turns; asked what two people "both" did, through
        each one's turns ("Little Women", which Joanna and Nate each said they watched)."""
        both = BOTH.search(case.question) is not None
        per_person = turns_by_person(graph, case.question, list(need.messages)) if both else []
        if not per_person:
            traced = self._trace(
                graph, case, anatomy, list(need.messages), need.where, need.item, copies=need.paraphrased
            )
            return [(need, traced)]
        return [
            (
                ItemNeed(f"{need.label} ({person})", need.item, need.words, turns, need.where),
                self._trace(
                    graph,
                    case,
                    anatomy,
                    list(turns),
                    need.where,
                    need.item,
                    about=person,
                    copies=need.paraphrased,
                ),
            )
            for person, turns in per_person
        ]

    def _trace(
        self,
        graph: GraphQueries,
        case: Case,
        anatomy: CaseAnatomy,
        evidence: list[VariableVersion],
        source: str,
        item: str | None = None,
        restated: str | None = None,
        about: str | None = None,
        copies: bool = False,
    ) -> Attribution:
        """Follow the information of these evidence turns (one item of the answer, when given; about
        one of the people the question joins, when given; each saying it alone, with `copies`)
        through memory to the answer step, and decide by the taxonomy."""
        facts = self._graph_facts(graph)
        gold = [item] if item is not None else case.gold
        target = self.scorer.prepare(
            case.question,
            gold,
            [(v.name, dated_message(graph, v)) for v in evidence],
            facts.speakers(graph),
        )
        if target.empty:
            return undetermined(graph, case, self.name, "the evidence and gold answer have no content words")
        if about is not None:  # a line about the other person joined in the question carries nothing
            person = content_stems(about)
            target.asked_about, target.others = person, (target.others | target.asked_about) - person
        path = [
            PathStep("var", v.id, v.seq, f"evidence ({source})", True, role=PathRole.EVIDENCE)
            for v in evidence
        ]
        question_seq = anatomy.question_seq
        memory = [v for v in facts.memory if v.seq < question_seq]
        carrying = self._carrying(graph, target, memory)
        live = live_state(graph, question_seq)
        restated = item if item is not None else restated  # the item another part may state
        if restated is not None and anatomy.retrieval_op is not None:
            # In memory and in the context alike, the item's own live carriers decide before any other
            # statement: another line naming its words is too often a look-alike ("a new city" of
            # another trip), so it stands for the item only when the item's own copies are gone.
            elsewhere = (
                None
                if any(v.id in carrying for v in live.values())
                else stated_elsewhere(
                    graph, case, anatomy, restated, live, facts.words_of, facts.speakers(graph)
                )
            )
            if elsewhere is not None:  # the traced turns' copy was lost, another part still says it
                version, text = elsewhere
                held = self.scorer.prepare(
                    case.question, [restated], [(version.name, text)], facts.speakers(graph)
                )
                if version.id in {v.id for v in anatomy.context_vars}:
                    return held_in_context(graph, case, anatomy, restated, version, text, path, self.name)
                if version.category == MEMORY_ENTRY:
                    path.append(
                        PathStep(
                            "var",
                            version.id,
                            version.seq,
                            "in memory at question time (another statement)",
                            True,
                            text,
                            PathRole.LIVE_AT_QUESTION,
                        )
                    )
                return question_time_error(
                    graph, case, anatomy, self.scorer, self.name, held, version, 1.0, path
                )
        if not carrying:
            jointly = held_jointly_in_context(
                graph, case, anatomy, target, item or ", ".join(case.gold), self.scorer, path, self.name
            )
            if jointly is not None:
                return jointly
            drawn = (
                held_jointly_in_memory(graph, evidence, live, target, self.scorer, facts.words_of)
                if restated is not None
                else []
            )
            if drawn:
                path.extend(
                    PathStep(
                        "var",
                        v.id,
                        v.seq,
                        "in memory at question time (jointly)",
                        True,
                        role=PathRole.LIVE_AT_QUESTION,
                    )
                    for v in drawn
                )
                result = question_time_error(
                    graph, case, anatomy, self.scorer, self.name, target, drawn[0], 1.0, path
                )
                names = " and ".join(v.name for v in drawn)
                result.explanation = (
                    f"No memory unit holds {quote(restated)} alone, but {names}, drawn from "
                    f"{', '.join(v.name for v in evidence)}, do together. {result.explanation}"
                )
                return result
            return extraction_error(graph, case, evidence, target, question_seq, path, self.scorer, self.name)
        live_carrying = [v for v in live.values() if v.id in carrying]
        first = min((graph.var(i) for i in carrying), key=lambda v: v.seq)
        path.append(
            PathStep(
                "var",
                first.id,
                first.seq,
                "first memory unit version carrying it",
                True,
                role=PathRole.FIRST_CARRIER,
            )
        )
        if not live_carrying:
            # Turns an inferred answer needs together each count on their own; turns stating the same
            # item are copies of it, lost only when the last one goes.
            joint = len(evidence) > 1 and item is None and not target.answer_required and not copies
            per_message = self._carrying_per_message(graph, case, evidence, gold, memory) if joint else []
            return loss_error(
                graph,
                case,
                carrying,
                question_seq,
                path,
                self.scorer,
                self.name,
                per_message,
                target,
            )
        best = max(live_carrying, key=lambda v: carrying[v.id])
        path.append(
            PathStep(
                "var", best.id, best.seq, "in memory at question time", True, role=PathRole.LIVE_AT_QUESTION
            )
        )
        return question_time_error(
            graph, case, anatomy, self.scorer, self.name, target, best, carrying[best.id], path
        )

    def _carrying(
        self, graph: GraphQueries, target: Target, memory: list[VariableVersion]
    ) -> dict[str, float]:
        """The memory versions carrying the target, with their support (the threshold reached)."""
        if isinstance(self.scorer, OverlapScorer):  # words cached per blob across cases
            words = self._graph_facts(graph).words_of(graph, memory)
            scores = {v.id: self.scorer.score_words(target, words[v.id]) for v in memory}
        else:  # the carrying rule on top of any scorer (the overlap scorer applies it itself)
            values = graph.values(memory)
            scores = {v.id: _support(target, values[v.id], self.scorer) for v in memory}
        return {k: score for k, score in scores.items() if score >= self.scorer.threshold}

    def _carrying_per_message(
        self,
        graph: GraphQueries,
        case: Case,
        evidence: list[VariableVersion],
        gold: list[str],
        memory: list[VariableVersion],
    ) -> list[dict[str, float]]:
        """For each evidence turn on its own, the memory versions carrying it (those that ever did)."""
        facts = self._graph_facts(graph)
        found = []
        for version in evidence:
            target = self.scorer.prepare(
                case.question, gold, [(version.name, dated_message(graph, version))], facts.speakers(graph)
            )
            if target.empty:
                continue
            carrying = self._carrying(graph, target, memory)
            if carrying:
                found.append(carrying)
        return found


def _support(target: Target, value: Any, scorer: SupportScorer) -> float:
    """How well a value carries the information under the one carrying rule (`best_part`)."""
    part = best_part(target, [(None, value)], scorer)
    return part.support if part is not None else 0.0


def _memory_versions(graph: GraphQueries) -> list[VariableVersion]:
    nodes = getattr(graph, "vars", None)
    if isinstance(nodes, dict):  # GraphView: everything is in memory already
        return [v for v in nodes.values() if v.category == MEMORY_ENTRY]
    return [v for name in graph.memory_units() for v in graph.versions(name)]
