"""`make demo`'s report says "the context held the information" only when it did (issue 19): every part
an explanation names as carrying holds every item of the gold answer by the strict judge's rule, and a
partial carrier names each item the context misses.

The workspace is `make demo`'s: the four systems run over the bundled sample, attributed, verified and
reported (reporthelpers.verified_workspace). The judge's rule (`memtrace.eval.strict.missing_parts`) is
applied to each named part on its own, with a relative date restated against the part's own "[said on
...]" stamp ("last week [said on 4 May 2023]" names "the week before 4 May 2023"); a bare "yes" or "no"
is no item (docs/concepts.md), since a context states the fact the answer says yes or no to.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from memtrace import Workspace
from memtrace.attribution.evidence.anatomy import case_anatomy
from memtrace.attribution.evidence.support import value_parts
from memtrace.attribution.model import load_attributions
from memtrace.attribution.verify.items import resolve_relative
from memtrace.eval.strict import missing_parts
from memtrace.report import build_report

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import verified_workspace

_ONE = re.compile(r"held the information in '(?P<part>.*)' \((?P<var>[^(),]+), support")
_EVERY = re.compile(r"held every item of the answer: (?P<named>.*); yet it answered")
_PARTIAL = re.compile(
    r"the context held only (?P<held>.*), a partial carrier, and missed (?P<missed>'.*?')\."
)
_BARE = frozenset({"yes", "no"})


def _items(gold: str) -> list[str]:
    """The items of a gold answer the judge checks (a bare yes or no is none)."""
    return [item for item in missing_parts("", gold) if item.strip().lower() not in _BARE]


def _lacks(text: str, gold: str) -> list[str]:
    """The items of `gold` that `text` does not hold by the judge's rule (relative dates resolved)."""
    missing = set(missing_parts(resolve_relative(text), gold))
    return [item for item in _items(gold) if item in missing]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str) -> list[str]:
    """The quoted strings of a comma-separated list of quotes ("'a', 'b'")."""
    return [q.strip("'") for q in re.split(r"', '", text.strip())]


def _part(quote: str, parts: list[str]) -> str | None:
    """The context part an explanation's quote names (a quote may be cut with '…')."""
    prefix = _flat(quote).removesuffix("…")
    return next((p for p in parts if _flat(p).startswith(prefix)), None)


def _label_in(label: str, quotes: list[str]) -> bool:
    return any(label.startswith(q.removesuffix("…")) for q in quotes)


def _problems(explanation: str, gold: list[str], context: dict[str, list[str]]) -> list[str]:
    """What is false in an explanation's "held" sentences, for this gold and context (empty: all true)."""
    every_part = [p for parts in context.values() for p in parts]
    problems: list[str] = []
    if (one := _ONE.search(explanation)) is not None:
        part = _part(one["part"], context.get(one["var"], []))
        if part is None:
            return [f"the named part {one['part']!r} is not in the context ({one['var']})"]
        best = min((_lacks(part, g) for g in gold), key=len)
        if best:
            problems.append(f"the named part {part!r} lacks {best}")
    if (every := _EVERY.search(explanation)) is not None:
        named = []
        for chunk in re.split(r"; (?=')", every["named"]):
            _, quote = chunk.split("' in '", 1)
            part = _part(quote.removesuffix("'"), every_part)
            if part is None:
                problems.append(f"the named part {quote!r} is not in the context")
            else:
                named.append(part)
        lacking = [[i for i in _items(g) if all(i in _lacks(p, g) for p in named)] for g in gold]
        if min(lacking, key=len):
            problems.append(f"no named part {named} holds {min(lacking, key=len)}")
    if (partial := _PARTIAL.search(explanation)) is not None:
        said_held, said_missed = _quoted(partial["held"]), _quoted(partial["missed"])
        for g in gold:
            lacked = [i for i in _items(g) if all(i in _lacks(p, g) for p in every_part)]
            unnamed = [i for i in lacked if not _label_in(i, said_missed)]
            if unnamed:
                problems.append(f"the context misses {unnamed}, which the explanation does not name")
            held = [i for i in _items(g) if i not in lacked and _label_in(i, said_held)]
            if len(held) < len(said_held):
                problems.append(f"it says the context held {said_held}; the judge's rule finds {held}")
    return problems


def test_every_held_sentence_of_the_demo_report_is_true_and_partial_carriers_name_the_missing() -> None:
    with Workspace(verified_workspace()) as ws:
        report = build_report(ws)
        latest = {(a.run_id, a.case_id): a for a in load_attributions(ws.store, method="flow")}
        runs = {r.id: ws.view(r.id) for r in report.runs}
        checked, partial, found = 0, 0, []
        for failure in report.failures:
            explanation = latest[failure.run_id, failure.case_id].explanation
            if not any(p.search(explanation) for p in (_ONE, _EVERY, _PARTIAL)):
                continue
            graph = runs[failure.run_id]
            case = ws.case(failure.run_id, failure.case_id)
            values = graph.values(case_anatomy(graph, case).context_vars)
            context = {var: [text for _, text in value_parts(value)] for var, value in values.items()}
            checked += 1
            partial += bool(_PARTIAL.search(explanation))
            found += [
                f"{failure.system} {failure.case_id}: {problem}. Explanation: {explanation}"
                for problem in _problems(explanation, list(case.gold), context)
            ]
    assert checked >= 40 and partial >= 2, (checked, partial)  # the demo's ResponseErrors and partial ones
    assert not found, "\n".join(found)


def test_the_checker_catches_a_false_held_sentence_and_an_unnamed_missing_item() -> None:
    """The check itself can say no: a part lacking an item, or a partial carrier hiding one, fails it."""
    context = {"retrieved@3": ["Clara adopted a dog named Pepper [on 17 March 2023]", "Diego likes rowing"]}
    gold = ["a dog named Pepper and a cat named Whiskers"]
    held = (
        "The context given to answer (answer#9) held the information in 'Clara adopted a dog named Pepper "
        "[on 17 March 2023]' (retrieved@3, support 1.00), yet it answered 'a dog'."
    )
    assert "lacks ['a cat named whiskers']" in _problems(held, gold, context)[0]
    hidden = (
        "The answer needs 2 items ('a dog named pepper', 'a cat named whiskers'); the context held only "
        "'a dog named pepper', a partial carrier, and missed 'a hamster'. For 'a cat named whiskers': ..."
    )
    assert "does not name" in _problems(hidden, gold, context)[0]
    named = hidden.replace("'a hamster'", "'a cat named whiskers'")
    assert _problems(named, gold, context) == []
    date = "held the information in 'Clara: I moved last week! [said on 4 May 2023]' (window@2, support 1.00)"
    assert (
        _problems(
            date,
            ["the week before 4 May 2023"],
            {"window@2": ["Clara: I moved last week! [said on 4 May 2023]"]},
        )
        == []
    )
