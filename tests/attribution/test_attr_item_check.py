"""Verification says no: an independent item check (the judge's rule and flow's rule per item, both
required) refutes a claim whose premise the recorded run contradicts, and confirms only what it finds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from attrhelpers import answer_window_wrongly, answer_wrongly, mem0_case, pets_run, trim_oldest, window_of

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.anatomy import case_anatomy
from memtrace.attribution.evidence.support import carrying_part
from memtrace.attribution.evidence.target import evidence_target
from memtrace.attribution.model import Attribution
from memtrace.attribution.verify.counterfactual import _undelivered, verify
from memtrace.attribution.verify.items import check_for, resolve_relative
from memtrace.attribution.verify.scope import never_touched
from memtrace.attribution.verify.verdicts import Verification
from memtrace.vocabulary import Verdict


def test_relative_dates_are_restated_against_their_stamp() -> None:
    assert "25 April 2023" in resolve_relative("I adopted a cat two days ago! [said on 27 April 2023]")
    assert "the week before 6 March 2023" in resolve_relative("Last week she passed away. [on 6 March 2023]")
    assert "15 August 2023" in resolve_relative("We met up on the 15th. [said on 17 August 2023]")
    assert "26 April 2023" in resolve_relative("I ran my first race yesterday [said on 27 April 2023]")
    assert resolve_relative("No stamp, yesterday.") == "No stamp, yesterday."


def _claim(ws: mt.Workspace, run_id: str, kind: str, op_prefix: str) -> Attribution:
    """Flow's attribution of the run's case, rewritten as another method's claim of `kind` at an op."""
    case = ws.cases(run_id)[0]
    flow = FlowMethod().attribute(ws.view(run_id), case)
    op = next(
        o
        for o in ws.graph(run_id).ops_by_category("retrieval") + ws.graph(run_id).ops_by_category("response")
        if o.id.startswith(op_prefix)
    )
    return replace(flow, error_type=kind, op_id=op.id, method="test-claim")


def test_a_response_error_whose_context_lacks_an_item_is_refuted(tmp_path: Path) -> None:
    """The demo's q10 pattern, claimed as a ResponseError: the dog of two pets never reached the context."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        outcome = verify(ws, _claim(ws, run_id, "ResponseError", "answer#"))
        assert (outcome.verdict, outcome.why) == ("refuted", "context-lacks-item"), outcome.reason
        assert "pepper" in outcome.reason.lower() and outcome.replay_run is None


def test_a_response_error_whose_context_holds_every_item_is_confirmed(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-1", "mem-2"])
    with mt.open(tmp_path) as ws:
        flow = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
        assert flow.error_type == "ResponseError"
        outcome = verify(ws, flow)
        assert (outcome.verdict, outcome.why) == ("flow-confirmed", "context-holds-every-item"), (
            outcome.reason
        )
        assert any("held" in line and "pepper" in line for line in outcome.checked)


def test_a_retrieval_error_whose_context_held_every_item_is_refuted(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-1", "mem-2"])
    with mt.open(tmp_path) as ws:
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "search#"))
        assert (outcome.verdict, outcome.why) == ("refuted", "context-had-it"), outcome.reason


def test_an_item_both_rules_disagree_on_concludes_nothing(tmp_path: Path) -> None:
    """Another person's dog named Pepper has every word of the item (the judge's rule sees it) but not
    its statement (flow's rule for the item does not): the item is disputed, neither held nor missing."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run_id), ws.cases(run_id)[0]
        check = check_for(graph, case)
        dog = next(item.text for item in check.items if "pepper" in item.text)
        look_alike = ["Omar's dog named Pepper ran away"]
        held = ["Diego adopted a dog named Pepper last spring, she loves the park"]
        assert check.status([look_alike])[dog] == "disputed"
        assert check.status([held])[dog] == "held"
        assert check.status([["Diego likes parks"]])[dog] == "missing"
        assert dog in check.lacking([look_alike])  # never held on the judge's word alone


def test_a_said_on_stamp_is_when_it_was_said_not_when_it_happened() -> None:
    """A "last week [said on 27 February]" does not hold a gold "the week before 6 March 2023" just
    because the day it was said falls inside that week."""
    from memtrace.attribution.verify.items import held_parts

    gold = "the week before 6 March 2023"
    said_earlier = "Last week, Maria's grandma passed away. [said on 27 February 2023]"
    said_then = "Last week, Maria's grandma passed away. [said on 6 March 2023]"
    assert not held_parts([said_earlier], gold)
    assert held_parts([said_then], gold)
    # An "[on ...]" stamp is the event's date as the memory resolved it: inside the gold week, held.
    assert held_parts(["Maria's grandma passed away. [on 27 February 2023]"], gold)


RIVER = "Tomasz: I finally paddled the whole Warta river route alone, three days of rain and no regrets!"


def _inferred_run(workspace: Path, retrieved: list[str]) -> str:
    """A raw-turn system asked a question whose gold ("Likely yes") no turn states: it is inferred."""
    with mt.run(workspace, name="river", system="rag") as run:
        with mt.op("load", category="construction") as op:
            op.output("D3:2", RIVER, category="message")
            op.output("D3:3", "Ines: Wow, how was the weather?", category="message")
        with mt.op("retrieve", category="retrieval") as op:
            op.input("query", "Would Tomasz enjoy a solo canoe trip?", category="query")
            found = op.output("retrieved", retrieved, category="retrieved")
        answer_wrongly(run, found, "Would Tomasz enjoy a solo canoe trip?", "Likely yes", ["D3:2"], "No")
        return run.id


def test_an_inferred_answer_is_checked_by_its_annotated_turns_whole(tmp_path: Path) -> None:
    """No turn states "yes": the annotated turn is the item, held only where every part of it is."""
    run_id = _inferred_run(tmp_path, [f"[D3:2] {RIVER}"])
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run_id), ws.cases(run_id)[0]
        check = check_for(graph, case)
        assert check.turns and [item.text for item in check.items] == ["turn D3:2"]
        assert check.status([[f"[D3:2] {RIVER} [said on 2 May 2023]"]]) == {"turn D3:2": "held"}
        # Half the turn (the paddling without "alone") is not the turn: never held on a look-alike.
        assert check.status([["Tomasz paddled the Warta river route"]])["turn D3:2"] != "held"
        assert check.status([["Ines asked about the weather"]]) == {"turn D3:2": "missing"}
        flow = FlowMethod().attribute(graph, case)
        outcome = verify(ws, replace(flow, error_type="ResponseError"))
        assert (outcome.verdict, outcome.why) == ("flow-confirmed", "context-holds-every-item"), (
            outcome.reason
        )
        assert "evidence turn" in outcome.reason


def test_an_inferred_answer_whose_context_lacks_its_turn_whole_is_left_open(tmp_path: Path) -> None:
    """A memory may split a turn into several facts, so a turn not found whole refutes nothing."""
    run_id = _inferred_run(tmp_path, ["[D3:3] Ines: Wow, how was the weather?"])
    with mt.open(tmp_path) as ws:
        outcome = verify(ws, _claim(ws, run_id, "ResponseError", "answer#"))
        assert (outcome.verdict, outcome.why) == ("not-verifiable", "turns-not-whole"), outcome.reason
        assert "turn D3:2" in outcome.reason


ARTIST = "Gina: Oh, and btw - I just teamed up with a local artist for some cool designs. Check 'em out!"
NEIGHBOUR = "Jon: It looks awesome. How'd you come up with these cool designs?"


def _month_run(workspace: Path, retrieved: list[str]) -> str:
    """A session said in February 2023: the annotated turn says what happened; its neighbour asks about it."""
    with mt.run(workspace, name="month", system="rag") as run:
        with mt.op("load", category="construction") as op:
            op.output("D5:date", "8 February 2023", category="session_date")
            artist = op.output("D5:5", ARTIST, category="message")
            op.output("D5:6", NEIGHBOUR, category="message")
        with mt.op("retrieve", category="retrieval") as op:
            op.use(artist)
            found = op.output("retrieved", retrieved, category="retrieved")
        answer_wrongly(
            run,
            found,
            "When did Gina team up with a local artist for some cool designs?",
            "February, 2023",
            ["D5:5"],
            "not mentioned",
        )
        return run.id


def test_a_date_only_stamps_hold_is_held_only_by_the_turn_saying_what_happened(tmp_path: Path) -> None:
    """Every turn said in February 2023 holds "February, 2023" by its stamp; only the annotated one says
    what happened then. A context with just its neighbour (sharing "cool designs") does not hold it."""
    run_id = _month_run(tmp_path, [f"{NEIGHBOUR} [said on 8 February 2023]"])
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run_id), ws.cases(run_id)[0]
        check = check_for(graph, case)
        (item,) = check.items
        assert item.target.labels == ["D5:5"]
        assert check.status([[f"{NEIGHBOUR} [said on 8 February 2023]"]])[item.text] != "held"
        assert check.status([[f"{ARTIST} [said on 8 February 2023]"]])[item.text] == "held"
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "retrieve#"))
        assert outcome.why != "context-had-it", outcome.reason


def test_a_stamped_date_is_held_only_by_a_part_naming_the_event_asked_about(tmp_path: Path) -> None:
    """Said the right month and sharing the asker's name and a word with the turn is not enough: the part
    must name the event the question asks about (half its words), or any line said then would do."""
    run_id = _month_run(tmp_path, [])
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run_id), ws.cases(run_id)[0])
        (item,) = check.items
        other_event = (
            "Gina worked hard on her online store and checked out cool designs [said on 8 February 2023]"
        )
        assert check.status([[other_event]])[item.text] != "held"
        same_event = "Gina teamed up with a local artist on some cool designs [said on 8 February 2023]"
        assert check.status([[same_event]])[item.text] == "held"


def test_a_question_holding_the_answer_s_words_does_not_state_it(tmp_path: Path) -> None:
    """The other speaker's question ("a piece from your early writings?") holds the words; the turn before
    states them. The statement alone is what a context must hold."""
    statement = "Joanna: I found my early writings in old notebooks last week, so much has changed!"
    question = (
        "Nate: You must love seeing how you've grown. Is there a piece from your early writings you love?"
    )
    with mt.run(tmp_path, name="notebooks", system="rag") as run:
        with mt.op("load", category="construction") as op:
            op.output("D26:5", statement, category="message")
            op.output("D26:6", question, category="message")
        with mt.op("retrieve", category="retrieval") as op:
            found = op.output("retrieved", [question], category="retrieved")
        answer_wrongly(
            run,
            found,
            "What was found in old notebooks last week?",
            "early writings",
            ["D26:5", "D26:6"],
            "photos",
        )
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run.id), ws.cases(run.id)[0])
        (item,) = check.items
        assert item.target.labels == ["D26:5"]
        assert check.status([[question]])[item.text] != "held"
        assert check.status([[statement]])[item.text] == "held"


def test_the_other_speaker_s_echo_does_not_state_what_the_person_asked_about_said(tmp_path: Path) -> None:
    """John says he does kickboxing; Maria's reply echoes the word. Asked about John, the item rests on
    John's line: a window left with Maria's echo alone does not hold it."""
    said = "John: Woah, Maria, that sounds cool! I'm doing kickboxing and it's giving me so much energy."
    echo = "Maria: Cool, John. Kickboxing is a perfect way to stay in shape and de-stress."
    with mt.run(tmp_path, name="echo", system="long_context") as run:
        with mt.op("load", category="construction") as op:
            op.output("D1:4", said, category="message")
            op.output("D1:5", echo, category="message")
        with mt.op("retrieve", category="retrieval") as op:
            found = op.output("retrieved", [echo], category="retrieved")
        answer_wrongly(run, found, "What martial arts has John done?", "Kickboxing", ["D1:4", "D1:5"], "yoga")
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run.id), ws.cases(run.id)[0])
        (item,) = check.items
        assert item.target.labels == ["D1:4"]
        assert check.status([[echo]])[item.text] != "held"
        assert check.status([[said]])[item.text] == "held"


def test_a_stamped_date_stated_by_a_turn_that_names_no_event_asks_none_of_the_part(tmp_path: Path) -> None:
    """ "We did it yesterday" says when, not what: the question's event words are not in the turn, so
    a context holding the turn holds the date."""
    turn = "Melanie: Yup, we just did it yesterday! The kids loved it after the road trip."
    with mt.run(tmp_path, name="hike", system="rag") as run:
        with mt.op("load", category="construction") as op:
            op.output("D18:date", "20 October 2023", category="session_date")
            op.output("D18:17", turn, category="message")
        with mt.op("retrieve", category="retrieval") as op:
            found = op.output("retrieved", [f"{turn} [said on 20 October 2023]"], category="retrieved")
        answer_wrongly(
            run,
            found,
            "When did Melanie go on a hike after the roadtrip?",
            "19 October 2023",
            ["D18:17"],
            "not mentioned",
        )
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run.id), ws.cases(run.id)[0])
        (item,) = check.items
        assert item.event == frozenset()
        assert check.status([[f"{turn} [said on 20 October 2023]"]])[item.text] == "held"


def test_memory_holding_another_items_turn_does_not_refute_an_extraction_loss(tmp_path: Path) -> None:
    """Two annotated turns name Oliver; no extraction kept him, and the second turn's unit holds only
    Bailey. Memory carries that turn (the message-level target) but lacks Oliver and Luna, the items
    the claim traced, so the claim's premise stands: it is not refuted."""
    turns = {
        "D1:3": "Melanie: Luna and Oliver are so sweet and playful, they liven up the house.",
        "D2:5": "Melanie: Oliver hid his bone in my slipper again! And we got another cat, Bailey.",
    }
    facts = {
        "mem-1": ("Melanie's cats liven up the house", "D1:3"),
        "mem-2": ("Melanie got another cat named Bailey", "D2:5"),
    }
    case = ("What are Melanie's pets' names?", "Oliver, Luna, Bailey", ["D1:3", "D2:5"], "Bailey")
    run_id = mem0_case(tmp_path, turns, facts, ["Melanie got another cat named Bailey"], case)
    with mt.open(tmp_path) as ws:
        graph, case_row = ws.view(run_id), ws.cases(run_id)[0]
        claim = FlowMethod().attribute(graph, case_row)
        assert claim.error_type == "ExtractionError", claim.explanation
        target = evidence_target(graph, case_row, claim)
        anatomy = case_anatomy(graph, case_row)
        memory = graph.memory_values_at(anatomy.question_seq - 1)
        assert carrying_part(target, list(memory.items())) is not None  # the message-level target
        outcome = Verification(claim, Verdict.ANSWER_CONFIRMED, "")
        _undelivered(ws, graph, case_row, claim, target, outcome, check_for(graph, case_row), [])
    assert outcome.verdict != Verdict.REFUTED, outcome.reason
    assert any("missing" in line and "oliver" in line for line in outcome.checked), outcome.checked


def test_a_context_holding_every_checked_item_refutes_nothing_when_an_item_is_inferred(
    tmp_path: Path,
) -> None:
    """No turn names the hamster: the item check cannot look for it, so a context holding Pepper and
    Whiskers is not shown to hold "every item", and a RetrievalError is not refuted by it."""
    turns = {
        "D1:3": "Diego: We adopted a dog named Pepper last spring, she loves the park.",
        "D2:5": "Diego: And last month we adopted a cat named Whiskers too.",
    }
    facts = {
        "mem-1": ("Diego adopted a dog named Pepper last spring", "D1:3"),
        "mem-2": ("Diego adopted a cat named Whiskers last month", "D2:5"),
    }
    retrieved = [text for text, _ in facts.values()]
    gold = "Pepper, Whiskers and a hamster named Biscuit"
    case = ("What pets does Diego have?", gold, ["D1:3", "D2:5"], "a cat")
    run_id = mem0_case(tmp_path, turns, facts, retrieved, case)
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run_id), ws.cases(run_id)[0])
        assert check.inferred and check.has_items
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "search#"))
    assert outcome.why != "context-had-it" and outcome.verdict != Verdict.REFUTED, outcome.reason


def _window_run(workspace: Path, gold: str) -> tuple[str, str]:
    """A window appended two lines, the question read it; returns the run id and the last append's id."""
    lines = [("D1:1", "Gina: I play the piano every evening."), ("D1:2", "Jon: Nice, I took up the violin.")]
    with mt.run(workspace, name="window", system="long_context") as run:
        _window, kept = window_of(run, lines)
        answer_window_wrongly(
            run,
            kept,
            "What instruments do Gina and Jon play?",
            gold=gold,
            evidence=["D1:1", "D1:2"],
            said="drums",
        )
    with mt.open(workspace) as ws:
        appends = [op.id for op in ws.graph(run.id).ops_by_category("update") if op.name == "memory_update"]
    return run.id, appends[-1]


def test_an_update_that_lost_no_checked_item_is_refuted_only_when_every_item_is_checked(
    tmp_path: Path,
) -> None:
    """The last append kept both lines: with the answer "piano, violin" it lost nothing; with a third
    instrument no turn names, it may have lost that one, and nothing can say it did not."""
    for name, gold, refuted in (
        ("checked", "piano, violin", True),
        ("inferred", "piano, violin, cello", False),
    ):
        path = tmp_path / name
        run_id, append = _window_run(path, gold)
        with mt.open(path) as ws:
            graph, case = ws.view(run_id), ws.cases(run_id)[0]
            claim = Attribution(run_id, case.id, append, "UpdateError", 0.5, "test claim", "test-claim")
            found = never_touched(graph, case, claim, check_for(graph, case))
        assert (found is not None and found[0] == "lost-nothing") is refuted, (name, found)


def test_an_extraction_loss_whose_items_memory_holds_is_disputed_not_refuted(tmp_path: Path) -> None:
    """Both pets' memories were live: an ExtractionError claim meets every item in memory, word for
    word. Words in a unit are no proof the fact is there, so the claim is disputed, without a replay."""
    run_id = pets_run(tmp_path, ["mem-2"])
    with mt.open(tmp_path) as ws:
        flow = FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])
        extraction = ws.graph(run_id).ops_by_category("extraction")[0]
        claim = replace(flow, error_type="ExtractionError", op_id=extraction.id, method="test-claim")
        outcome = verify(ws, claim)
    assert (outcome.verdict, outcome.why) == (Verdict.NOT_VERIFIABLE, "memory-held-items"), outcome.reason
    assert outcome.replay_run is None and "pepper" in outcome.reason.lower()


def test_an_item_asked_of_both_people_is_held_only_with_each_ones_own_statement(tmp_path: Path) -> None:
    """ "What have Caroline and Melanie both painted?": the context has Caroline's sunset and Melanie's
    remark on it ("looks like a real sunset"), not Melanie's own lake sunset. The sunset is held for
    Caroline, not for Melanie, so a RetrievalError is not refuted by a context holding "every item"."""
    turns = {
        "D1:2": "Melanie: I painted a lake sunset last year, it hangs in the kitchen now.",
        "D2:5": "Caroline: Here is my new painting of a sunset at the beach!",
        "D2:6": "Melanie: Wow, it really looks like a real sunset!",
    }
    facts = {
        "mem-1": ("Melanie painted a lake sunset last year", "D1:2"),
        "mem-2": ("Caroline painted a sunset at the beach", "D2:5"),
        "mem-3": ("Melanie said it really looks like a real sunset", "D2:6"),
    }
    retrieved = [facts["mem-2"][0], facts["mem-3"][0]]
    question = "What subject have Caroline and Melanie both painted?"
    run_id = mem0_case(tmp_path, turns, facts, retrieved, (question, "Sunsets", ["D1:2", "D2:5"], "beach"))
    with mt.open(tmp_path) as ws:
        graph, case = ws.view(run_id), ws.cases(run_id)[0]
        status = check_for(graph, case).status([retrieved])
        assert status == {"sunsets (Melanie)": "disputed", "sunsets (Caroline)": "held"}, status
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "search#"))
    assert outcome.why != "context-had-it" and outcome.verdict != Verdict.REFUTED, outcome.reason


def test_a_speaker_named_as_the_answer_is_stated_by_the_annotated_turn_not_by_every_line_she_said(
    tmp_path: Path,
) -> None:
    """ "Who invited Nate to the trails?" "Joanna": her other lines all begin "Joanna:", so a trim that
    cut the invitation did not lose "nothing" because some line of hers is left."""
    lines = [
        ("D1:1", "Joanna: You should come down and join me on the trails sometime!"),
        ("D1:2", "Nate: Maybe, I mostly stay in and game."),
        ("D1:3", "Joanna: I finished another draft of my screenplay this week."),
    ]
    with mt.run(tmp_path, name="window", system="long_context") as run:
        window, kept = window_of(run, lines)
        kept, trims = trim_oldest(window, kept, 1)
        answer_window_wrongly(
            run,
            kept,
            "Who invited Nate to join her on the trails?",
            gold="Joanna",
            evidence=["D1:1"],
            said="Nate",
        )
    with mt.open(tmp_path) as ws:
        graph, case_row = ws.view(run.id), ws.cases(run.id)[0]
        check = check_for(graph, case_row)
        assert "joanna" in check.lacking([kept])  # Nate's line and Joanna's screenplay do not say it
        claim = Attribution(run.id, case_row.id, trims[0], "UpdateError", 0.5, "test claim", "test-claim")
        assert never_touched(graph, case_row, claim, check) is None


def test_an_inferred_answer_is_checked_by_its_evidence_turns_and_can_still_be_refuted(tmp_path: Path) -> None:
    """ "Is Jon outdoorsy?" "He is outdoorsy": no turn says the word, so the items are the annotated
    turn, which covers the whole answer. A context holding that turn word for word refutes a
    RetrievalError, unchecked gold parts notwithstanding."""
    turn = "Jon: I go hiking and camping in the mountains every weekend."
    facts = {"mem-1": ("I go hiking and camping in the mountains every weekend.", "D1:3")}
    case = ("Is Jon outdoorsy?", "He is outdoorsy", ["D1:3"], "no")
    run_id = mem0_case(tmp_path, {"D1:3": turn}, facts, [facts["mem-1"][0]], case)
    with mt.open(tmp_path) as ws:
        check = check_for(ws.view(run_id), ws.cases(run_id)[0])
        assert check.turns and check.inferred and check.complete
        outcome = verify(ws, _claim(ws, run_id, "RetrievalError", "search#"))
    assert (outcome.verdict, outcome.why) == (Verdict.REFUTED, "context-had-it"), outcome.reason


def test_a_retrieval_repair_that_reached_the_context_says_which_item_is_still_lacking(tmp_path: Path) -> None:
    """The repair put Pepper's memory in the context, but the replayed context lacks Whiskers: that is
    what keeps the claim open, not "a later step replaced the repair", which is false here."""
    run_id = pets_run(tmp_path, ["mem-2"])  # the search returned Whiskers only
    with mt.open(tmp_path) as ws:
        graph, case_row = ws.view(run_id), ws.cases(run_id)[0]
        claim = FlowMethod().attribute(graph, case_row)
        assert claim.error_type == "RetrievalError", claim.explanation
        target = evidence_target(graph, case_row, claim)
        outcome = Verification(claim, Verdict.ANSWER_CONFIRMED, "")
        replayed = ["Diego adopted a dog named Pepper last spring"]  # Whiskers pushed out
        _undelivered(ws, graph, case_row, claim, target, outcome, check_for(graph, case_row), replayed)
    assert (outcome.verdict, outcome.why) == (Verdict.NOT_VERIFIABLE, "items-still-lacking"), outcome.reason
    assert "whiskers" in outcome.reason and "replaced" not in outcome.reason
