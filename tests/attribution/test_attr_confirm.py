"""The one carrying rule: a part carries the information only if it states what the evidence states."""

from __future__ import annotations

from memtrace.attribution.evidence.support import OverlapScorer, best_part, carrying_part, states_answer

EVIDENCE = [("D1:7", "Clara: I adopted a dog named Pepper last month! Pepper is a labrador.")]
QUESTION, GOLD = "What breed is Clara's dog?", ["labrador"]


def test_a_part_sharing_only_the_topic_does_not_carry_a_stated_answer() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(QUESTION, GOLD, EVIDENCE)
    assert target.answer_required and target.gold == ("labrador",)
    context = ["Clara adopted a dog named Pepper last month! [on 17 March 2023]", "Diego likes rowing."]
    assert carrying_part(target, [("ctx@1", context)], scorer) is None
    context.append("Pepper is a labrador and loves long walks. [on 16 April 2023]")
    found = carrying_part(target, [("ctx@1", context)], scorer)
    assert found is not None and "labrador" in found.text and found.var_id == "ctx@1" and found.states_answer


def test_a_part_not_stating_the_answer_is_no_candidate_when_the_evidence_states_it() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(QUESTION, GOLD, EVIDENCE)
    # a tagged line of the evidence message scores by its tag, yet without the answer it carries nothing
    tagged = ["[D1:7] Clara: I adopted a dog named Pepper last month!"]
    best = best_part(target, [("ctx@1", tagged)], scorer)
    assert best is None or best.support == 0.0
    assert carrying_part(target, [("ctx@1", tagged)], scorer) is None
    # when the evidence does not state the answer (it is inferred), the part need not state it
    inferred = scorer.prepare("When did Clara adopt a dog?", ["March 2023"], EVIDENCE)
    assert not inferred.answer_required
    found = carrying_part(inferred, [("ctx@1", tagged)], scorer)
    assert found is not None and not found.states_answer


def test_states_answer_needs_every_content_word_of_some_gold() -> None:
    assert states_answer("She works at a tech company now", ["a tech company", "Harbor Works"])
    assert not states_answer("She works at a company", ["a tech company"])


def test_a_gold_date_matched_only_by_the_said_on_stamp_is_not_required_of_a_part() -> None:
    scorer = OverlapScorer()
    evidence = [("D3:1", "Clara: I just moved to Lisbon last week! [said on 4 May 2023]")]
    target = scorer.prepare("When did Clara move to Lisbon?", ["the week before 4 May 2023"], evidence)
    assert not target.answer_required
    resolved = ["Big news, Diego: Clara just moved to Lisbon last week! [on 27 April 2023]"]
    assert carrying_part(target, [("ctx@1", resolved)], scorer) is not None


def test_a_relative_date_said_on_a_stamped_day_states_the_date_it_names() -> None:
    """LoCoMo's "June 11, 2023" is "Last Sunday" said on 13 June: a retrieved chunk stamping its lines
    once, at its end, carries it through the line that says what happened last Sunday, and so does a
    memory keeping the words; the same lines without "last Sunday" name no day, and carry nothing."""
    scorer = OverlapScorer()
    said = (
        "Andrew: Last Sunday was awesome - my friends and I took a rock climbing class!"
        " [said on 13 June 2023]"
    )
    target = scorer.prepare("When did Andrew go rock climbing?", ["June 11, 2023"], [("D8:1", said)])
    chunk = (
        "[D8:1] Andrew: Last Sunday was awesome - my friends and I took a rock climbing class!\n"
        "[D8:2] Audrey: Glad you had such a rad experience rock climbing. [said on 13 June 2023]"
    )
    found = carrying_part(target, [("doc@1", chunk)], scorer)
    assert found is not None and found.text.startswith("[D8:1]")
    assert carrying_part(target, [("doc@1", chunk.replace("Last Sunday", "The other day"))], scorer) is None
    memory = "Andrew's friends and Andrew took a rock climbing class last Sunday."
    assert carrying_part(target, [("mem@1", f"{memory} [said on 13 June 2023]")], scorer) is not None
    assert carrying_part(target, [("mem@1", memory)], scorer) is None  # said when? no day is named


def test_a_hedge_on_a_new_line_leaves_the_line_before_a_done_fact() -> None:
    """Mem0 appends a new line to a memory it updates: "Maybe Audrey will get another tattoo" hedges
    that line, not the photo caption ending the line before, which still shows the sunflowers."""
    scorer = OverlapScorer()
    said = "Audrey: So much that I got tattoos of them on my arm. [shares a photo of a tattoo of sunflowers]"
    target = scorer.prepare("What flowers does Audrey have a tattoo of?", ["sunflowers"], [("D3:26", said)])
    first = (
        "So much that Audrey got tattoos of them on Audrey's arm. [shares a photo of a tattoo of sunflowers]"
    )
    updated = {"memory": f"{first}\nMaybe Audrey will get another tattoo when that happens.", "id": "mem-91"}
    assert carrying_part(target, [("mem-91@1", {"memory": first, "id": "mem-91"})], scorer) is not None
    assert carrying_part(target, [("mem-91@2", updated)], scorer) is not None
    hedged_only = {"memory": "Maybe Audrey will get a tattoo of sunflowers when that happens.", "id": "m"}
    assert carrying_part(target, [("m@1", hedged_only)], scorer) is None


def test_an_irregular_past_states_its_verb() -> None:
    """Porter leaves "lost" apart from "losing": "Losing Jon's job" states a gold "he lost his job"."""
    scorer = OverlapScorer()
    said = [("D1:2", "Jon: Lost my job as a banker yesterday, so I'm starting my own dance studio.")]
    target = scorer.prepare("Why did Jon start his dance studio?", ["He lost his job"], said, ["Jon", "Gina"])
    assert carrying_part(target, [("m", "Losing Jon's job gave Jon the push to start a studio")], scorer)
    assert carrying_part(target, [("m", "Jon is starting a dance studio")], scorer) is None
    assert carrying_part(target, [("m", "Gina lost her job at Door Dash")], scorer) is None
