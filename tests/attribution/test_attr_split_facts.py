"""An item a memory system split over two facts of one turn was still in memory."""

from __future__ import annotations

from pathlib import Path

from attrhelpers import flow_claim, mem0_case

NOOK = (
    "Lena: Get a sofa that seats six, and make sure it's really fluffy! Also grab a blanket with some weight."
)
QUESTION = ("What does Lena suggest for a cosy reading nook?", "fluffy blanket", ["D4:2"], "a lamp")


def test_two_facts_of_one_turn_hold_an_item_together(tmp_path: Path) -> None:
    """mem0 wrote "really fluffy" and "a blanket with some weight" as two facts of D4:2: the item
    "fluffy blanket" was live in memory, so the search that returned neither is blamed, not the
    extraction that kept both words."""
    run_id = mem0_case(
        tmp_path,
        {"D4:2": NOOK, "D5:1": "Lena: I repainted the shed."},
        {
            "mem-1": ("Lena suggests a sofa that seats six, make sure it's really fluffy", "D4:2"),
            "mem-2": ("Lena suggests a blanket with some weight", "D4:2"),
            "mem-3": ("Lena repainted the shed", "D5:1"),
        },
        ["Lena repainted the shed"],
        QUESTION,
    )
    error_type, op_id, why = flow_claim(tmp_path, run_id)
    assert error_type == "RetrievalError", why
    assert op_id is not None and op_id.startswith("search#"), why
    assert "mem-1 and mem-2" in why, why


def test_facts_of_different_turns_do_not_join_into_an_item(tmp_path: Path) -> None:
    """A blanket fact drawn from another turn is no part of D4:2's item: the fluffy sofa alone lacks
    the blanket, and the extraction of D4:2 that dropped it is blamed."""
    run_id = mem0_case(
        tmp_path,
        {"D4:2": NOOK, "D5:1": "Lena: My aunt knitted me a heavy blanket."},
        {
            "mem-1": ("Lena suggests a sofa that seats six, make sure it's really fluffy", "D4:2"),
            "mem-2": ("Lena's aunt knitted her a heavy blanket", "D5:1"),
        },
        ["Lena's aunt knitted her a heavy blanket"],
        QUESTION,
    )
    error_type, op_id, why = flow_claim(tmp_path, run_id)
    assert error_type == "ExtractionError", why
    assert op_id is not None and op_id.startswith("extract_facts#"), why
