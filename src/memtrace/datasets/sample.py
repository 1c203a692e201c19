"""The bundled sample conversation: small, offline, deterministic, and built to exercise memory failures.

Two friends talk over five dated sessions spread over several weeks of 2023. The first speaker's facts
change (moves city, changes job) and one is revoked (quits the band), so that memory systems have updates and
deletions to get wrong; dates are given relative to the session ("yesterday", "last week") so that temporal
questions need the session date. Sentences are plain LoCoMo-style chat ("I just moved to Lisbon last week!")
that a rule-based extractor can mine.

Every gold answer is literal: its content words appear in the evidence turns (speaker names included), or,
for temporal questions, it is the evidence session's date shifted by the relative phrase in the turn.
Unanswerable questions have the gold `[NOT_MENTIONED]` (the LoCoMo adversarial convention) and, like
LoCoMo's, name the tempting turn about the other person as evidence.

`sample_conversation(seed)` varies names, places and details with the seed; the same seed always gives an
identical conversation. `Conversation.metadata["facts"]` maps fact labels to dia_ids (for fault injection)
and each question's `metadata["facts"]` lists the labels it relies on.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta

from ..text import format_date, session_date_text
from . import _sample_words as w
from .model import (
    KNOWLEDGE_UPDATE,
    MULTI_HOP,
    NOT_MENTIONED,
    SINGLE_HOP,
    TEMPORAL,
    UNANSWERABLE,
    Conversation,
    Question,
    Session,
    Turn,
)

SESSIONS = 5


def _an(phrase: str) -> str:
    return f"an {phrase}" if phrase[0].lower() in "aeiou" else f"a {phrase}"


class _Builder:
    """Accumulates sessions and turns, remembering which turn states which fact."""

    def __init__(self, a: str, b: str) -> None:
        self.names = {"A": a, "B": b}
        self.sessions: list[Session] = []
        self.facts: dict[str, str] = {}

    def session(self, when: datetime) -> None:
        self.sessions.append(Session(index=len(self.sessions) + 1, date=session_date_text(when), turns=[]))

    def say(self, who: str, text: str, fact: str | None = None, caption: str | None = None) -> None:
        current = self.sessions[-1]
        dia_id = f"D{current.index}:{len(current.turns) + 1}"
        current.turns.append(Turn(dia_id, self.names[who], text, current.index, current.date, caption))
        if fact:
            self.facts[fact] = dia_id


def sample_conversation(seed: int = 0) -> Conversation:
    """The sample conversation for `seed` (same seed -> identical output), with its 31 gold questions."""
    rng = random.Random(seed)
    a, b = rng.sample(w.PEOPLE, 2)
    city1, city2 = rng.sample(w.CITIES, 2)
    job1, job2 = rng.sample(w.JOBS, 2)
    company1, company2 = rng.sample(w.COMPANIES, 2)
    b_job, workplace = rng.choice(w.FRIEND_JOBS)
    instrument, band = rng.choice(w.INSTRUMENTS), rng.choice(w.BANDS)
    dog, breed = rng.choice(w.DOGS), rng.choice(w.BREEDS)
    cat, cat_color = rng.choice(w.CATS), rng.choice(w.CAT_COLORS)
    hobby, old_ex, new_ex = rng.choice(w.HOBBIES), rng.choice(w.OLD_EXERCISE), rng.choice(w.NEW_EXERCISE)
    race, book, dish, sister = (
        rng.choice(w.RACES),
        rng.choice(w.BOOKS),
        rng.choice(w.DISHES),
        rng.choice(w.SISTERS),
    )
    trip, trip_photo = rng.choice(w.TRIPS)
    day = date(2023, 3, 1) + timedelta(days=rng.randint(0, 60))
    whens = []
    for _ in range(SESSIONS):
        whens.append(datetime.combine(day, time(rng.randint(9, 21), rng.randint(0, 59))))
        day += timedelta(days=rng.randint(6, 13))

    s = _Builder(a, b)
    s.session(whens[0])
    s.say("A", rng.choice(w.GREETINGS).format(other=b))
    s.say("B", f"Hi {a}! Work at the {workplace} has been busy, but I love being {_an(b_job)}.", "b_job")
    s.say(
        "A",
        f"Glad to hear it! I'm still living in {city1} and working as {_an(job1)} at {company1}.",
        "a_job1",
    )
    s.say("B", "Nice! Are you still playing music on the weekends?")
    s.say("A", f"Yes! I play {instrument} in a band called {band}. We rehearse every Thursday.", "a_band")
    s.say("B", f"{rng.choice(w.REPLIES)} Anything else new?")
    s.say(
        "A", f"I adopted a dog named {dog} last month! {dog} is {_an(breed)} and loves long walks.", "a_dog"
    )
    s.say("B", f"Aww! I've been doing {old_ex} three times a week to unwind after long shifts.", "b_ex1")
    s.say("A", f"Good for you. I'm really into {hobby} these days, it keeps me sane.", "a_hobby")
    s.say("B", rng.choice(w.SIGN_OFFS))
    s.facts["a_city1"] = s.facts["a_job1"]

    s.session(whens[1])
    s.say("B", f"Guess what, {a}? I adopted a cat named {cat} two days ago!", "b_cat")
    s.say("A", f"No way, congrats! What is {cat} like?")
    s.say("B", f"{cat} is a shy {cat_color} tabby who sleeps all day. How was your week?")
    s.say("A", f"I ran my first {race} yesterday! My legs are still sore.", "a_race")
    s.say("B", f"{rng.choice(w.REPLIES)} I'm reading {book} right now, it's so good.", "b_book")
    s.say("A", f"I've heard great things about it. Work at {company1} has been stressful lately, though.")
    s.say("B", "Hang in there, you'll figure it out.")

    s.session(whens[2])
    s.say("A", f"Big news, {b}: I just moved to {city2} last week!", "a_move")
    s.say("B", f"Wow, that's huge! Why {city2}?")
    s.say("A", f"I wanted a fresh start, and the rent in {city1} was getting crazy.")
    s.say("B", f"Makes sense. What about {band}?")
    s.say("A", f"I quit the band two days ago. It was too hard to make rehearsals from {city2}.", "a_quit")
    s.say("B", "That's a shame, you were great with them.")
    s.say("B", f"Oh, and my sister {sister} just got engaged, so we're all planning the party!", "b_sister")
    s.say("A", f"Congratulations to {sister}! {rng.choice(w.SIGN_OFFS)}")

    s.session(whens[3])
    s.say("B", f"Hey {a}! How's life in {city2}?")
    s.say("A", f"It's great! And I started a new job as {_an(job2)} at {company2} yesterday.", "a_job2")
    s.say("B", f"Congrats! So you left {company1}?")
    s.say("A", f"Yes, I left {company1} after four years. I'm excited to try something new.")
    s.say("B", f"I have news too: I stopped doing {old_ex} and I'm really into {new_ex} now.", "b_ex2")
    s.say("A", f"{rng.choice(w.REPLIES)} That suits you.")
    s.say("B", f"Also, I cooked {dish} for my family today and it turned out great.", "b_dish")
    s.say("A", "Save me some next time!")

    s.session(whens[4])
    s.say("B", f"I just got back from a vacation in {trip} yesterday!", "b_trip")
    s.say("A", "Jealous! How was it?")
    s.say("B", "Beautiful. I took so many photos, look at this one.", caption=trip_photo)
    s.say("A", f"Wow. {dog} and I have been exploring the parks in {city2} every morning.")
    s.say("B", f"That sounds lovely. How's the new job at {company2}?")
    s.say("A", f"I love it. Being {_an(job2)} is a great fit for me.")
    s.say("B", f"{cat} says hi, by the way. She finally stopped hiding under the bed.")
    s.say("A", "Ha! Give her a scratch from me.")

    when = [moment.date() for moment in whens]
    questions = [
        # single-hop: one turn states the answer
        (SINGLE_HOP, f"What is the name of {a}'s dog?", dog, ["a_dog"]),
        (SINGLE_HOP, f"What breed is {a}'s dog?", breed, ["a_dog"]),
        (SINGLE_HOP, f"What instrument does {a} play?", instrument, ["a_band"]),
        (SINGLE_HOP, f"What was the name of {a}'s band?", band, ["a_band"]),
        (SINGLE_HOP, f"What does {b} do for work?", b_job, ["b_job"]),
        (SINGLE_HOP, f"What book is {b} reading?", book, ["b_book"]),
        (SINGLE_HOP, f"What is the name of {b}'s sister?", sister, ["b_sister"]),
        (SINGLE_HOP, f"Where did {b} go on vacation?", trip, ["b_trip"]),
        (SINGLE_HOP, f"What hobby is {a} into?", hobby, ["a_hobby"]),
        # multi-hop: the answer joins two turns
        (MULTI_HOP, f"Which cities has {a} lived in?", f"{city1} and {city2}", ["a_city1", "a_move"]),
        (
            MULTI_HOP,
            f"What pets do {a} and {b} have?",
            f"a dog named {dog} and a cat named {cat}",
            ["a_dog", "b_cat"],
        ),
        (
            MULTI_HOP,
            f"Which companies has {a} worked for?",
            f"{company1} and {company2}",
            ["a_job1", "a_job2"],
        ),
        (MULTI_HOP, f"What instrument did {a} play in the band {a} quit?", instrument, ["a_band", "a_quit"]),
        (MULTI_HOP, f"What kinds of exercise has {b} done?", f"{old_ex} and {new_ex}", ["b_ex1", "b_ex2"]),
        (MULTI_HOP, f"In which city was {a} living when {a} ran the {race}?", city1, ["a_city1", "a_race"]),
        # temporal: the session date shifted by the turn's relative phrase
        (TEMPORAL, f"When did {b} adopt {cat}?", format_date(when[1] - timedelta(days=2)), ["b_cat"]),
        (TEMPORAL, f"When did {a} run the {race}?", format_date(when[1] - timedelta(days=1)), ["a_race"]),
        (TEMPORAL, f"When did {a} move to {city2}?", f"the week before {format_date(when[2])}", ["a_move"]),
        (TEMPORAL, f"When did {a} quit the band?", format_date(when[2] - timedelta(days=2)), ["a_quit"]),
        (
            TEMPORAL,
            f"When did {a} start working at {company2}?",
            format_date(when[3] - timedelta(days=1)),
            ["a_job2"],
        ),
        (TEMPORAL, f"When did {b} cook {dish}?", format_date(when[3]), ["b_dish"]),
        (
            TEMPORAL,
            f"When did {b} get back from {trip}?",
            format_date(when[4] - timedelta(days=1)),
            ["b_trip"],
        ),
        # knowledge-update: a later turn replaces or revokes an earlier one (both are evidence)
        (KNOWLEDGE_UPDATE, f"Where does {a} live now?", city2, ["a_city1", "a_move"]),
        (KNOWLEDGE_UPDATE, f"What is {a}'s current job?", f"{job2} at {company2}", ["a_job1", "a_job2"]),
        (
            KNOWLEDGE_UPDATE,
            f"Is {a} still in the band {band}?",
            f"No, {a} quit the band",
            ["a_band", "a_quit"],
        ),
        (KNOWLEDGE_UPDATE, f"What exercise is {b} into now?", new_ex, ["b_ex1", "b_ex2"]),
        # unanswerable: asks about the other person; evidence is the tempting turn
        (UNANSWERABLE, f"What is the name of {b}'s dog?", NOT_MENTIONED, ["a_dog"]),
        (UNANSWERABLE, f"What instrument does {b} play?", NOT_MENTIONED, ["a_band"]),
        (UNANSWERABLE, f"Where did {a} go on vacation?", NOT_MENTIONED, ["b_trip"]),
        (UNANSWERABLE, f"What is the name of {a}'s sister?", NOT_MENTIONED, ["b_sister"]),
        (UNANSWERABLE, f"What is the name of {a}'s cat?", NOT_MENTIONED, ["b_cat"]),
    ]
    conv_id = f"sample-{seed}"
    return Conversation(
        id=conv_id,
        speakers=[a, b],
        sessions=s.sessions,
        questions=[
            Question(
                id=f"{conv_id}-q{i}",
                question=text,
                answers=[answer],
                evidence=[s.facts[f] for f in facts],
                category=category,
                category_raw=category,
                metadata={"facts": facts},
            )
            for i, (category, text, answer, facts) in enumerate(questions)
        ],
        source="sample",
        metadata={"seed": seed, "facts": dict(s.facts)},
    )
