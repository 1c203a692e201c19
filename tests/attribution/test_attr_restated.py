"""An item said again elsewhere (issue 19): a copy by the same speaker keeps the item alive until the
last copy goes; a live memory stating it, tied to the question, makes a lost turn a retrieval miss;
a look-alike sharing one word does neither. Verification's placebo refutes a trim that lost a line
another line still carried."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from attrhelpers import mem0_case, one_session

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.model import PathRole, PathStep
from memtrace.attribution.verify import counterfactual
from memtrace.attribution.verify.counterfactual import verify
from memtrace.datasets.model import Conversation, Question
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig

DOGS = "James: The names of my three dogs are Ned, Daisy and Max! They run my whole house."


def _dogs_run(workspace: Path, live: list[str], retrieved: list[str]) -> str:
    """Mem0-like: the annotated turn's extraction drops the dogs; other memories say what they say."""
    with mt.run(workspace, name="dogs", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            turn = op.output("D1:14", DOGS, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(turn)
            run.memory("mem-1").create({"memory": "James likes his house"}, by=op)
        for n, text in enumerate(live, 2):
            with mt.op("extract_facts", category="extraction") as op:
                run.memory(f"mem-{n}").create({"memory": text}, by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "What are the names of James's dogs?", category="query")
            found = op.output("retrieved", retrieved, category="retrieved")
        case = run.case("What are the names of James's dogs?", gold="Ned, Daisy, Max", evidence=["D1:14"])
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "Ned", category="prediction")
        case.predict("Ned", var=prediction)
        case.judge(False)
        return run.id


def test_a_live_memory_naming_the_items_together_makes_it_a_retrieval_miss(tmp_path: Path) -> None:
    together = "James started introducing Max, Daisy and the new pup Ned"
    run_id = _dogs_run(tmp_path, [together], ["James's dog Ned loves the vet"])
    with mt.open(tmp_path) as ws:
        result = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
    assert (result.error_type, result.op_id.split("#")[0]) == ("RetrievalError", "search"), result.explanation
    assert "introducing Max, Daisy" in result.explanation  # the memory that still said it is named


def test_a_name_alone_beside_no_word_of_the_question_is_not_a_statement(tmp_path: Path) -> None:
    """ "Daisy came and lay down next to James" names a Daisy, but says nothing of dogs or the other
    names: the dogs were lost where the annotated turn was dropped."""
    alone = "James was playing a game and Daisy came and lay down next to James"
    run_id = _dogs_run(tmp_path, [alone], ["James's dog Ned loves the vet"])
    with mt.open(tmp_path) as ws:
        result = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
    assert result.error_type == "ExtractionError", result.explanation


def _window_conversation(gold: str = "support group") -> Conversation:
    """Caroline names the support group twice in session 1 (D1:3, then D1:7); Mel echoes it (D1:5);
    small talk follows, so a small window trims D1:3 long before D1:7."""
    turns = [
        ("D1:1", "Mel", "Hey Caroline, what have you been up to lately?"),
        ("D1:2", "Caroline", "Busy week at the studio, lots of clay everywhere."),
        ("D1:3", "Caroline", "I went to an LGBTQ support group yesterday and it was powerful."),
        ("D1:4", "Mel", "That sounds really meaningful, tell me more."),
        ("D1:5", "Mel", "A support group like that must be a great comfort."),
        ("D1:6", "Caroline", "Everyone shared their stories, it felt safe."),
        ("D1:7", "Caroline", "The support group has made me feel accepted for who I am."),
    ]
    filler = [
        (
            f"D1:{n}",
            "Mel" if n % 2 else "Caroline",
            f"Small talk number {n} about weather, lunch and traffic jams.",
        )
        for n in range(8, 30)
    ]
    question = Question("q0", "What LGBTQ events has Caroline joined?", [gold], ["D1:3"], "single-hop")
    return one_session(
        "window", ["Caroline", "Mel"], turns + filler, "1:56 pm on 8 May, 2023", "8 May 2023", [question]
    )


def test_a_copy_by_the_same_speaker_keeps_the_item_until_the_last_copy_goes(tmp_path: Path) -> None:
    run = run_conversation(LongContext(LongContextConfig(max_tokens=220)), _window_conversation(), tmp_path)
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run.run_id), ws.cases(run.run_id)[0]
        assert case.verdict == "wrong"
        result = FlowMethod().attribute(graph, case)
        assert result.error_type == "UpdateError", result.explanation
        assert "D1:7" in result.explanation  # the last copy's loss decides, not D1:3's (nor Mel's echo)
        # The same claim moved to the earlier trim that dropped D1:3: later ideal trims alone keep D1:7,
        # so verification's placebo says the earlier trim lost nothing the answer needed.
        kept = result.step(PathRole.LAST_CARRIER)
        first_drop = _trim_dropping(graph, "[D1:3]")
        unit = kept.id.rsplit("@", 1)[0]
        before = max((v for v in graph.versions(unit) if v.seq < first_drop.seq), key=lambda v: v.seq)
        path = [s for s in result.path if s.role != PathRole.LAST_CARRIER]
        path.append(PathStep("var", before.id, before.seq, "last carrier", True, role=PathRole.LAST_CARRIER))
        claim = replace(result, op_id=first_drop.id, path=path, method="test-claim")
        # The window after that trim still holds the item (D1:7's copy): refuted with no replay at all.
        outcome = verify(ws, claim)
        assert (outcome.verdict, outcome.why) == ("refuted", "lost-nothing"), outcome.reason
        assert outcome.replay_run is None
        # Without that check, the placebo replay reaches the same verdict on its own.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(counterfactual, "never_touched", lambda *args: None)
            outcome = verify(ws, claim)
        assert (outcome.verdict, outcome.why) == ("refuted", "placebo-delivers"), outcome.reason
        assert "support group" in outcome.checked[-1]


def _trim_dropping(graph: mt.GraphQueries, tag: str) -> object:
    """The trim whose output first lacks the line tagged `tag`."""
    for op in sorted(graph.ops_by_category("update"), key=lambda o: o.seq):
        if op.name != "trim_memory":
            continue
        out = graph.outputs(op.id)[0]
        if not any(str(line).startswith(tag) for line in graph.value(out.id)):
            return op
    raise AssertionError(f"no trim drops {tag}")


def _dropped_turn_run(
    workspace: Path, question: str, gold: str, turn: str, live: str, *, retrieved: bool = False
) -> str:
    """Joanna's turn D1:1 is never extracted; `live` is a memory at question time, retrieved or not."""
    with mt.run(workspace, name="dropped", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            said = op.output("D1:1", turn, category="message")
            op.output("D1:2", "Nate: Wow, tell me everything about it!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(said)
            run.memory("mem-1").create({"memory": "Joanna likes her weekends quiet"}, by=op)
        with mt.op("extract_facts", category="extraction") as op:
            run.memory("mem-2").create({"memory": live}, by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", question, category="query")
            context = ["Joanna likes her weekends quiet", *([live] if retrieved else [])]
            found = op.output("retrieved", context, category="retrieved")
        case = run.case(question, gold=gold, evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "Not mentioned", category="prediction")
        case.predict("Not mentioned", var=prediction)
        case.judge(False)
        return run.id


def _flow_type(workspace: Path, run_id: str) -> tuple[str, str]:
    with mt.open(workspace) as ws:
        result = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
    return result.error_type, result.explanation


SCREEN = "What did Joanna contribute to that was shown on the big screen?"
SCREEN_TURN = "Joanna: Another movie script I contributed to was shown on the big screen last Sunday!"


def test_a_hope_is_no_tie_to_what_was_done(tmp_path: Path) -> None:
    """Hoping to get a new script on the big screen states no script that was shown there: the turn
    that said so was lost where it was never extracted."""
    hoped = "Joanna is writing another movie script and is hoping to get it on the big screen"
    kind, why = _flow_type(tmp_path, _dropped_turn_run(tmp_path, SCREEN, "movie script", SCREEN_TURN, hoped))
    assert kind == "ExtractionError", why


def test_a_done_fact_in_a_live_memory_is_a_retrieval_miss(tmp_path: Path) -> None:
    done = "A movie script Joanna contributed to was shown on the big screen"
    kind, why = _flow_type(tmp_path, _dropped_turn_run(tmp_path, SCREEN, "movie script", SCREEN_TURN, done))
    assert kind == "RetrievalError", why


RECOMMEND = "What did Joanna recently watch and recommend to Nate?"
RECOMMEND_TURN = (
    'Joanna: I just watched "Little Women" and it was amazing! It is a great story about four sisters,'
    " their dreams, love and growing up, and I think you would really enjoy it."
)


def test_a_line_about_the_other_person_named_in_the_question_is_no_tie(tmp_path: Path) -> None:
    """The question asks about Joanna (named first); Nate watching the film later is not her
    recommendation, though it names Nate, who the question names too."""
    other = 'Nate watched "Little Women" recently, and it was great!'
    run_id = _dropped_turn_run(tmp_path, RECOMMEND, '"Little Women"', RECOMMEND_TURN, other, retrieved=True)
    kind, why = _flow_type(tmp_path, run_id)
    assert kind == "ExtractionError", why
    said_by_her = 'Joanna recently watched "Little Women" and recommends it to Nate'
    again = tmp_path / "again"
    run_id = _dropped_turn_run(
        again, RECOMMEND, '"Little Women"', RECOMMEND_TURN, said_by_her, retrieved=True
    )
    kind, why = _flow_type(again, run_id)
    assert kind == "ResponseError", why


def test_the_line_quoted_as_stating_the_item_is_the_line_that_did(tmp_path: Path) -> None:
    """Two lines of the context name the film: Nate's, which says nothing of Joanna, comes first. The
    explanation quotes Joanna's line, the one that ties the film to the question, not the first line
    with its words."""
    lookalike = 'Nate said "Little Women" is on TV tonight'
    hers = 'Joanna recently watched "Little Women" and recommends it to Nate'
    run_id = mem0_case(
        tmp_path,
        {"D1:1": RECOMMEND_TURN},
        {"mem-1": ("Joanna likes her weekends quiet", "D1:1")},
        [lookalike, hers],
        (RECOMMEND, '"Little Women"', ["D1:1"], "Not mentioned"),
    )
    kind, why = _flow_type(tmp_path, run_id)
    assert kind == "ResponseError", why
    assert "recommends it to Nate" in why and "on TV tonight" not in why, why


def test_no_trim_is_said_to_lose_nothing_when_an_item_of_the_answer_is_unchecked(tmp_path: Path) -> None:
    """The same window, but the gold adds a parade no turn names: no rule can check it, so neither the
    window after the early trim nor the placebo replay shows "every item" kept."""
    conversation = _window_conversation("support group, pride parade")
    run = run_conversation(LongContext(LongContextConfig(max_tokens=220)), conversation, tmp_path)
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run.run_id), ws.cases(run.run_id)[0]
        result = FlowMethod().attribute(graph, case)
        assert result.error_type == "UpdateError", result.explanation
        first_drop = _trim_dropping(graph, "[D1:3]")
        claim = replace(result, op_id=first_drop.id, method="test-claim")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(counterfactual, "never_touched", lambda *args: None)
            placebo_only = verify(ws, claim)
        outcome = verify(ws, claim)
    for checked in (outcome, placebo_only):
        assert checked.why not in ("lost-nothing", "placebo-delivers"), checked.reason
