"""Invented two-speaker conversations, facts, questions and planted faults for dev3.

Everything here is made up for this synthetic set.  Slot keys (e.g. "Y.pet") are
internal to the simulator: a memory entry belongs to one slot, a question needs
one or more slots.  F(...) is an ordinary fact, C(...) a cancellation that an
ideal update step turns into a DELETE of the slot's live memory.
"""


def F(slot, text, value):
    return {"slot": slot, "text": text, "value": value, "kind": "set"}


def C(slot, text):
    return {"slot": slot, "text": text, "value": None, "kind": "cancel"}


# ---------------------------------------------------------------- graph 1
G1 = {
    "name": "ysolde-teodor",
    "speakers": {"Y": "Ysolde", "T": "Teodor"},
    "conventions": {
        "top_k": 5,
        "message": "json",
        "fenced": True,
        "prompt": "A",
        "golden": "list",
        "judge": "json",
    },
    "sessions": [
        {
            "date": "2023-04-02 18:40",
            "msgs": [
                (
                    "Y",
                    "Teodor! It's been ages. I finally set up my workshop in Port Quillan, right above the chandlery.",
                    [F("Y.city", "Ysolde lives in Port Quillan", "Port Quillan")],
                ),
                ("T", "Port Quillan suits you. Are you still doing the lighthouse lenses?", []),
                (
                    "Y",
                    "Yes, I restore Fresnel lenses from old lighthouses. The current one came off the Skerrow light.",
                    [
                        F(
                            "Y.job",
                            "Ysolde restores Fresnel lenses from old lighthouses",
                            "Fresnel lenses from old lighthouses",
                        )
                    ],
                ),
                (
                    "T",
                    "That's wonderful. Over here in Hallowmere I'm still coaching competitive yo-yo, mostly teenagers.",
                    [
                        F("T.city", "Teodor lives in Hallowmere", "Hallowmere"),
                        F("T.job", "Teodor works as a competitive yo-yo coach", "competitive yo-yo coach"),
                    ],
                ),
                ("Y", "Ha, I remember your loop-the-loop demo at the harvest fair. How's Saffron?", []),
                (
                    "T",
                    "Saffron the tortoise is thriving, one eye and all. She ate half a courgette this morning.",
                    [F("T.tortoise", "Teodor has a one-eyed tortoise named Saffron", "Saffron")],
                ),
                (
                    "Y",
                    "Give her a scratch from me. I've got a new flatmate too: an axolotl called Brindle.",
                    [F("Y.pet", "Ysolde has an axolotl named Brindle", "Brindle")],
                ),
                ("T", "An axolotl! Do they need cold water?", []),
                (
                    "Y",
                    "Cold and dim. He sulks if the tank goes above eighteen degrees.",
                    [
                        F(
                            "Y.petcare",
                            "Ysolde keeps Brindle's tank below eighteen degrees",
                            "below eighteen degrees",
                        )
                    ],
                ),
                (
                    "T",
                    "Noted. By the way, I'm planning a walking trip to Tarn Esk this autumn.",
                    [F("T.trip", "Teodor plans a walking trip to Tarn Esk in autumn", "Tarn Esk")],
                ),
                ("Y", "Lucky you. The tide's coming in and I need to close the shutters. Talk soon!", []),
            ],
        },
        {
            "date": "2023-05-14 09:05",
            "msgs": [
                (
                    "T",
                    "Morning! Music news: I play the hurdy-gurdy and the bass clarinet now, and the neighbours hate both.",
                    [
                        F("T.inst1", "Teodor plays the hurdy-gurdy", "hurdy-gurdy"),
                        F("T.inst2", "Teodor plays the bass clarinet", "bass clarinet"),
                    ],
                ),
                ("Y", "What a combination. Do you still have that battered accordion?", []),
                (
                    "T",
                    "I do, the old accordion lives under the bed.",
                    [F("T.accordion", "Teodor owns an old accordion", "old accordion")],
                ),
                (
                    "Y",
                    "My spare time is split between falconry and carving chess pieces out of driftwood.",
                    [
                        F("Y.hobby1", "Ysolde practises falconry", "falconry"),
                        F(
                            "Y.hobby2",
                            "Ysolde carves chess pieces from driftwood",
                            "carving chess pieces from driftwood",
                        ),
                    ],
                ),
                ("T", "Falconry! Is there a bird?", []),
                (
                    "Y",
                    "Not mine. I fly a borrowed kestrel from the Quillan raptor centre.",
                    [
                        F(
                            "Y.bird",
                            "Ysolde flies a borrowed kestrel from the Quillan raptor centre",
                            "a borrowed kestrel",
                        )
                    ],
                ),
                (
                    "Y",
                    "And I'm entering my driftwood chess set in the Corrow Fair in June.",
                    [
                        F(
                            "Y.plan",
                            "Ysolde plans to enter her driftwood chess set in the Corrow Fair in June",
                            "the Corrow Fair",
                        )
                    ],
                ),
                (
                    "T",
                    "You'll win. Oh, news: I adopted a newt! I named him Bramble.",
                    [F("T.newt", "Teodor adopted a newt named Bramble", "Bramble")],
                ),
                ("Y", "Bramble and Brindle. They'd get on.", []),
                ("T", "Weather's awful here, by the way. Three days of drizzle.", []),
                ("Y", "Same on the coast. Speak next week.", []),
            ],
        },
        {
            "date": "2023-07-21 20:30",
            "msgs": [
                (
                    "Y",
                    "Big news: I've moved! I left Port Quillan and I'm now in Dunmarrow, in a cottage by the weir.",
                    [F("Y.city", "Ysolde lives in Dunmarrow", "Dunmarrow")],
                ),
                ("T", "Dunmarrow! Is the workshop moving too?", []),
                ("Y", "The workshop came with me. Still lenses, still dust.", []),
                (
                    "T",
                    "My own news: I've quit coaching. I now run the lights for the Gallowglass Puppet Theatre.",
                    [
                        F(
                            "T.job",
                            "Teodor works as the lighting technician at the Gallowglass Puppet Theatre",
                            "lighting technician at the Gallowglass Puppet Theatre",
                        )
                    ],
                ),
                ("Y", "Puppets! That's very you.", []),
                (
                    "T",
                    "Sadly it means the Tarn Esk trip is off. I cancelled it, the theatre needs me in October.",
                    [C("T.trip", "Teodor cancelled his walking trip to Tarn Esk")],
                ),
                ("Y", "Shame. We'll walk somewhere closer.", []),
                (
                    "T",
                    "And I finally sold the old accordion to a busker.",
                    [C("T.accordion", "Teodor sold his old accordion")],
                ),
                ("Y", "Good riddance, honestly.", []),
                ("T", "Ha. Saffron says hello.", []),
            ],
        },
        {
            "date": "2023-09-02 15:10",
            "msgs": [
                ("Y", "I've been practising with the kestrel every morning; she's getting braver.", []),
                ("T", "How's the cottage by the weir?", []),
                ("Y", "Damp but lovely. Brindle's tank sits in the coolest corner.", []),
                (
                    "T",
                    "I'm teaching myself to solder lighting rigs. Lots of burnt fingers.",
                    [
                        F(
                            "T.learning",
                            "Teodor is teaching himself to solder lighting rigs",
                            "soldering lighting rigs",
                        )
                    ],
                ),
                ("Y", "Wear gloves! Talk soon.", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g1-f1",
            "op": ["update", "D2:8"],
            "kind": "overwrite",
            "fact": "T.newt",
            "target": "Y.pet",
            "text": "Ysolde has an axolotl named Bramble",
            "value": "Bramble",
            "note": "Teodor's newt name overwrites Ysolde's axolotl memory (look-alike)",
        },
        {
            "id": "g1-f2",
            "op": ["update", "D3:4"],
            "kind": "ignore",
            "fact": "T.job",
            "note": "job change ignored, memory keeps yo-yo coach",
        },
        {
            "id": "g1-f3",
            "op": ["update", "D3:6"],
            "kind": "delete",
            "target": "Y.plan",
            "note": "legit DELETE of the Tarn Esk trip plus a wrong DELETE of Ysolde's fair plan",
        },
        {
            "id": "g1-f4",
            "op": ["update", "D3:8"],
            "kind": "delete",
            "target": "T.inst2",
            "replace_fact": "T.accordion",
            "note": "deletes the bass clarinet instead of the sold accordion",
        },
        {
            "id": "g1-f5",
            "op": ["extract", "D1:6"],
            "kind": "distort",
            "fact": "T.tortoise",
            "text": "Teodor has a one-eyed tortoise named Saffran",
            "value": "Saffran",
            "note": "tortoise name misspelt at extraction",
        },
        {
            "id": "g1-f6",
            "op": ["search", "q6"],
            "kind": "demote",
            "slot": "Y.job",
            "note": "job memory ranked out of the top-k",
        },
        {
            "id": "g1-f7",
            "op": ["search", "q1"],
            "kind": "demote",
            "slot": "Y.pet",
            "note": "non-decisive second fault: q1 is already broken by g1-f1",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "What is the name of Ysolde's axolotl?",
            "slots": ["Y.pet"],
            "gold": ["Brindle"],
            "ev": ["D1:7"],
            "expect": ["UpdateError", "g1-f1"],
        },
        {
            "qid": "q2",
            "q": "What is Teodor's current job?",
            "slots": ["T.job"],
            "gold": ["lighting technician at the Gallowglass Puppet Theatre"],
            "ev": ["D3:4"],
            "expect": ["UpdateError", "g1-f2"],
        },
        {
            "qid": "q3",
            "q": "Which fair is Ysolde entering her driftwood chess set in?",
            "slots": ["Y.plan"],
            "gold": ["the Corrow Fair", "Corrow Fair"],
            "ev": ["D2:7"],
            "expect": ["DeletionError", "g1-f3"],
        },
        {
            "qid": "q4",
            "q": "What two instruments does Teodor play?",
            "slots": ["T.inst1", "T.inst2"],
            "tmpl": "{0} and {1}",
            "gold": ["hurdy-gurdy and bass clarinet"],
            "ev": ["D2:1"],
            "distract": ["T.accordion"],
            "expect": ["DeletionError", "g1-f4"],
        },
        {
            "qid": "q5",
            "q": "What is Teodor's tortoise called?",
            "slots": ["T.tortoise"],
            "gold": ["Saffron"],
            "ev": ["D1:6"],
            "expect": ["ExtractionError", "g1-f5"],
        },
        {
            "qid": "q6",
            "q": "What does Ysolde restore for a living?",
            "slots": ["Y.job"],
            "gold": ["Fresnel lenses from old lighthouses"],
            "ev": ["D1:3"],
            "expect": ["RetrievalError", "g1-f6"],
        },
        {
            "qid": "q7",
            "q": "Where does Ysolde live now?",
            "slots": ["Y.city"],
            "gold": ["Dunmarrow"],
            "ev": ["D3:1"],
            "expect": None,
        },
        {
            "qid": "q8",
            "q": "What are Ysolde's two hobbies?",
            "slots": ["Y.hobby1", "Y.hobby2"],
            "tmpl": "{0} and {1}",
            "gold": ["falconry and carving chess pieces from driftwood"],
            "ev": ["D2:4"],
            "expect": None,
        },
        {
            "qid": "q9",
            "q": "Which town does Teodor live in?",
            "slots": ["T.city"],
            "gold": ["Hallowmere"],
            "ev": ["D1:4"],
            "expect": None,
        },
    ],
}

# ---------------------------------------------------------------- graph 2
G2 = {
    "name": "quenby-arvo",
    "speakers": {"Q": "Quenby", "A": "Arvo"},
    "conventions": {
        "top_k": 3,
        "message": "plain",
        "fenced": False,
        "prompt": "B",
        "golden": "string",
        "judge": "yesno",
    },
    "sessions": [
        {
            "date": "2023-02-11 11:20",
            "msgs": [
                (
                    "Q",
                    "Arvo, hello from Skellig Bay! The fog hasn't lifted in a week.",
                    [F("Q.city", "Quenby lives in Skellig Bay", "Skellig Bay")],
                ),
                (
                    "A",
                    "Vask is the same. The ferries are running on radar alone.",
                    [F("A.city", "Arvo lives in Vask", "Vask")],
                ),
                ("Q", "Are you still fixing the ferry engines?", []),
                (
                    "A",
                    "Still an engineer on the Vask ferry line, yes. Mostly the old diesel on the Maren.",
                    [
                        F(
                            "A.job",
                            "Arvo is an engineer on the Vask ferry line",
                            "engineer on the Vask ferry line",
                        )
                    ],
                ),
                (
                    "A",
                    "I'm based at the Vask harbour depot, which smells of bilge.",
                    [F("A.base", "Arvo is stationed at the Vask harbour depot", "the Vask harbour depot")],
                ),
                (
                    "Q",
                    "I've been underground most of the month. I map cave systems for the geological survey.",
                    [
                        F(
                            "Q.job",
                            "Quenby maps cave systems for the geological survey",
                            "maps cave systems for the geological survey",
                        )
                    ],
                ),
                ("A", "Found anything good?", []),
                (
                    "Q",
                    "A chamber with a lake in it. I finally named the cave: Hollow Lantern.",
                    [F("Q.cave", "Quenby named the cave she mapped Hollow Lantern", "Hollow Lantern")],
                ),
                ("A", "Beautiful name. How's Turnip?", []),
                (
                    "Q",
                    "Turnip the goat ate my field notebook. Pygmy goats are menaces.",
                    [F("Q.goat", "Quenby has a pygmy goat named Turnip", "Turnip")],
                ),
                ("A", "Serves you right for leaving it on the wall.", []),
            ],
        },
        {
            "date": "2023-03-30 19:45",
            "msgs": [
                (
                    "A",
                    "Guess what, we got a pygmy goat too! The kids named her Parsnip.",
                    [F("A.goat", "Arvo has a pygmy goat named Parsnip", "Parsnip")],
                ),
                ("Q", "Turnip and Parsnip. A root-vegetable alliance.", []),
                (
                    "Q",
                    "I've signed up for the Fjallmark ultramarathon in August.",
                    [
                        F(
                            "Q.race",
                            "Quenby signed up for the Fjallmark ultramarathon in August",
                            "the Fjallmark ultramarathon",
                        )
                    ],
                ),
                ("A", "Madness. I'll cheer from a cafe.", []),
                (
                    "Q",
                    "I'm also learning two languages for fieldwork: Faroese and Basque.",
                    [
                        F("Q.lang1", "Quenby is learning Faroese", "Faroese"),
                        F("Q.lang2", "Quenby is learning Basque", "Basque"),
                    ],
                ),
                (
                    "A",
                    "I can barely manage Norwegian. My plan this summer is to turn the old boathouse into a sauna.",
                    [F("A.boathouse", "Arvo plans to turn his old boathouse into a sauna", "a sauna")],
                ),
                ("Q", "A sauna by the water! Invite me.", []),
                (
                    "A",
                    "Also I've switched to wool-lined wellies. Changed my life.",
                    [F("A.boots", "Arvo wears wool-lined wellies", "wool-lined wellies")],
                ),
                (
                    "Q",
                    "My sister just opened a bakery in Vask, by the way. You should visit.",
                    [F("Q.sister", "Quenby's sister opened a bakery in Vask", "a bakery in Vask")],
                ),
                ("A", "I'll go tomorrow. Cardamom buns, I hope.", []),
            ],
        },
        {
            "date": "2023-06-18 08:15",
            "msgs": [
                (
                    "A",
                    "Promotion! I'm now chief engineer of the Vask ferry line.",
                    [
                        F(
                            "A.job",
                            "Arvo is chief engineer of the Vask ferry line",
                            "chief engineer of the Vask ferry line",
                        )
                    ],
                ),
                ("Q", "Chief! Congratulations.", []),
                (
                    "A",
                    "They also moved the fleet, so I'm stationed at Orrin Quay now instead of the harbour depot.",
                    [F("A.base", "Arvo is stationed at Orrin Quay", "Orrin Quay")],
                ),
                (
                    "Q",
                    "Orrin Quay is pretty. Bad news on my end: I dropped out of the Fjallmark ultramarathon. My knee.",
                    [C("Q.race", "Quenby dropped out of the Fjallmark ultramarathon")],
                ),
                ("A", "Oh no. Rest it properly.", []),
                (
                    "Q",
                    "I bought new crampons for the ice caves instead.",
                    [F("Q.crampons", "Quenby bought new crampons for the ice caves", "new crampons")],
                ),
                ("A", "Practical. Parsnip says hi.", []),
                (
                    "A",
                    "The storm last week knocked out power at the quay for two days.",
                    [F("A.storm", "A storm knocked out power at Orrin Quay for two days", "power cut")],
                ),
                ("Q", "Yikes. Were the ferries all right?", []),
                ("A", "All fine, just cold coffee.", []),
                ("Q", "Ha. Talk soon, chief.", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g2-f1",
            "op": ["update", "D2:9"],
            "kind": "overwrite",
            "fact": "Q.sister",
            "target": "Q.city",
            "text": "Quenby lives in Vask",
            "value": "Vask",
            "note": "sister's bakery town overwrites Quenby's home town",
        },
        {
            "id": "g2-f2",
            "op": ["update", "D3:3"],
            "kind": "ignore",
            "fact": "A.base",
            "note": "move of base ignored",
        },
        {
            "id": "g2-f3",
            "op": ["update", "D3:4"],
            "kind": "delete",
            "target": "Q.lang2",
            "note": "legit DELETE of the race plus wrong DELETE of Basque",
        },
        {
            "id": "g2-f4",
            "op": ["update", "D3:6"],
            "kind": "overwrite",
            "fact": "Q.crampons",
            "target": "A.boots",
            "text": "Arvo wears new crampons",
            "value": "new crampons",
            "note": "fault on a fact nobody asks about",
        },
        {
            "id": "g2-f5",
            "op": ["update", "D3:8"],
            "kind": "delete",
            "target": "A.boathouse",
            "note": "storm message deletes the live sauna plan",
        },
        {
            "id": "g2-f6",
            "op": ["extract", "D1:8"],
            "kind": "drop",
            "fact": "Q.cave",
            "note": "cave name dropped at extraction",
        },
        {
            "id": "g2-f7",
            "op": ["qa", "q6"],
            "kind": "answer",
            "prediction": "Turnip",
            "note": "answers with Quenby's goat although Arvo's is in context",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "Which town does Quenby live in?",
            "slots": ["Q.city"],
            "gold": "Skellig Bay",
            "ev": ["D1:1"],
            "expect": ["UpdateError", "g2-f1"],
        },
        {
            "qid": "q2",
            "q": "Where is Arvo stationed now?",
            "slots": ["A.base"],
            "gold": "Orrin Quay",
            "ev": ["D3:3"],
            "expect": ["UpdateError", "g2-f2"],
        },
        {
            "qid": "q3",
            "q": "Which two languages is Quenby learning?",
            "slots": ["Q.lang1", "Q.lang2"],
            "tmpl": "{0} and {1}",
            "gold": "Faroese and Basque",
            "ev": ["D2:5"],
            "expect": ["DeletionError", "g2-f3"],
        },
        {
            "qid": "q4",
            "q": "What does Arvo plan to turn his boathouse into?",
            "slots": ["A.boathouse"],
            "gold": "a sauna",
            "ev": ["D2:6"],
            "expect": ["DeletionError", "g2-f5"],
        },
        {
            "qid": "q5",
            "q": "What did Quenby name the cave she mapped?",
            "slots": ["Q.cave"],
            "gold": "Hollow Lantern",
            "ev": ["D1:8"],
            "expect": ["ExtractionError", "g2-f6"],
        },
        {
            "qid": "q6",
            "q": "What is the name of Arvo's pygmy goat?",
            "slots": ["A.goat"],
            "gold": "Parsnip",
            "ev": ["D2:1"],
            "distract": ["Q.goat"],
            "expect": ["ResponseError", "g2-f7"],
        },
        {
            "qid": "q7",
            "q": "What is Arvo's job now?",
            "slots": ["A.job"],
            "gold": "chief engineer of the Vask ferry line",
            "ev": ["D3:1"],
            "expect": None,
        },
        {
            "qid": "q8",
            "q": "What does Quenby do for work?",
            "slots": ["Q.job"],
            "gold": "maps cave systems for the geological survey",
            "ev": ["D1:6"],
            "expect": None,
        },
        {
            "qid": "q9",
            "q": "What is Quenby's goat called?",
            "slots": ["Q.goat"],
            "gold": "Turnip",
            "ev": ["D1:10"],
            "expect": None,
        },
    ],
}

# ---------------------------------------------------------------- graph 3
G3 = {
    "name": "wendeline-osric",
    "speakers": {"W": "Wendeline", "O": "Osric"},
    "conventions": {
        "top_k": 8,
        "message": "json",
        "fenced": False,
        "prompt": "A",
        "golden": "string",
        "judge": "reason",
    },
    "sessions": [
        {
            "date": "2023-01-08 16:00",
            "msgs": [
                (
                    "W",
                    "Osric! Happy new year from Brackwater. The foundry's shut till Monday so I'm finally resting.",
                    [F("W.city", "Wendeline lives in Brackwater", "Brackwater")],
                ),
                ("O", "Happy new year! Still an apprentice at the bell foundry?", []),
                (
                    "W",
                    "Yes, apprentice at Kettering & Sons Bell Foundry. I mostly fettle the castings.",
                    [F("W.job", "Wendeline is an apprentice at Kettering & Sons Bell Foundry", "apprentice")],
                ),
                (
                    "O",
                    "Good for you. My year started with the tide tables. I calculate them for the Gullsbridge harbour authority.",
                    [
                        F(
                            "O.job",
                            "Osric calculates tide tables for the Gullsbridge harbour authority",
                            "tide tables",
                        ),
                        F("O.city", "Osric lives in Gullsbridge", "Gullsbridge"),
                    ],
                ),
                ("W", "Sounds like precise work.", []),
                (
                    "O",
                    "Precise and lonely. The jackdaws keep me company, Pip and Fennel.",
                    [
                        F("O.bird1", "Osric keeps a jackdaw named Pip", "Pip"),
                        F("O.bird2", "Osric keeps a jackdaw named Fennel", "Fennel"),
                    ],
                ),
                ("W", "I'd forgotten their names. Do they talk?", []),
                ("O", "Fennel says 'tea?' and nothing else.", []),
                (
                    "W",
                    "Ha! Warning before you visit: I'm allergic to hazelnuts, so no praline gifts.",
                    [F("W.allergy", "Wendeline is allergic to hazelnuts", "hazelnuts")],
                ),
                ("O", "Understood. How's the music going?", []),
                (
                    "W",
                    "I'm learning the nyckelharpa, slowly and squeakily.",
                    [F("W.instrument", "Wendeline is learning the nyckelharpa", "the nyckelharpa")],
                ),
            ],
        },
        {
            "date": "2023-03-19 21:10",
            "msgs": [
                (
                    "O",
                    "I've been playing the serpent again. The bass wind instrument, not a snake.",
                    [F("O.instrument", "Osric plays the serpent", "the serpent")],
                ),
                ("W", "I love that it looks like a drainpipe.", []),
                (
                    "O",
                    "My collection grew too: two more antique barometers.",
                    [F("O.collect", "Osric collects antique barometers", "antique barometers")],
                ),
                (
                    "W",
                    "Funny, I've started collecting antique thermometers myself.",
                    [F("W.collect", "Wendeline collects antique thermometers", "antique thermometers")],
                ),
                ("O", "We could open a weather museum.", []),
                (
                    "W",
                    "I'm planning a cycling holiday in the Vosges this September.",
                    [
                        F(
                            "W.holiday",
                            "Wendeline plans a cycling holiday in the Vosges in September",
                            "the Vosges",
                        )
                    ],
                ),
                (
                    "O",
                    "And I'm going to build a harpsichord from a kit over the winter.",
                    [
                        F(
                            "O.harpsichord",
                            "Osric plans to build a harpsichord from a kit over the winter",
                            "a harpsichord kit",
                        )
                    ],
                ),
                ("W", "That's ambitious.", []),
                (
                    "O",
                    "Pip lost a tail feather yesterday, but he's fine.",
                    [
                        F(
                            "O.piphealth",
                            "Osric's jackdaw Pip lost a tail feather but is fine",
                            "lost a tail feather",
                        )
                    ],
                ),
                ("W", "Poor Pip.", []),
            ],
        },
        {
            "date": "2023-06-04 12:30",
            "msgs": [
                (
                    "W",
                    "I got promoted! I'm the foundry's bell tuner now.",
                    [
                        F(
                            "W.job",
                            "Wendeline is the bell tuner at Kettering & Sons Bell Foundry",
                            "bell tuner",
                        )
                    ],
                ),
                ("O", "Tuner! You'll be shaving bronze off bells all day.", []),
                (
                    "W",
                    "Also I've moved out of Brackwater; I'm renting a house in Lowther Fen now.",
                    [F("W.city", "Wendeline lives in Lowther Fen", "Lowther Fen")],
                ),
                (
                    "O",
                    "Lowther Fen is flat but lovely. Change of plan on my side: I gave up on the harpsichord kit, too fiddly.",
                    [C("O.harpsichord", "Osric gave up on building the harpsichord kit")],
                ),
                ("W", "Fair enough.", []),
                (
                    "W",
                    "And a change of plan for the holiday: not the Vosges after all, we're cycling the Jura instead.",
                    [
                        F(
                            "W.holiday",
                            "Wendeline plans a cycling holiday in the Jura in September",
                            "the Jura",
                        )
                    ],
                ),
                ("O", "The Jura has better cheese anyway.", []),
                ("O", "Next year's tables are due in August, so I'll be a hermit for a while.", []),
                ("W", "I'll send snacks. Safe ones.", []),
                ("O", "Ha. Fennel says tea.", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g3-f1",
            "op": ["update", "D2:4"],
            "kind": "overwrite",
            "fact": "W.collect",
            "target": "O.collect",
            "text": "Osric collects antique thermometers",
            "value": "antique thermometers",
            "note": "Wendeline's thermometers overwrite Osric's barometers (look-alike)",
        },
        {
            "id": "g3-f2",
            "op": ["update", "D2:9"],
            "kind": "delete",
            "target": "O.bird2",
            "note": "feather message deletes the second jackdaw",
        },
        {"id": "g3-f3", "op": ["update", "D3:3"], "kind": "ignore", "fact": "W.city", "note": "move ignored"},
        {
            "id": "g3-f4",
            "op": ["update", "D3:4"],
            "kind": "delete",
            "target": "W.allergy",
            "note": "legit DELETE of the harpsichord plan plus wrong DELETE of the allergy",
        },
        {
            "id": "g3-f5",
            "op": ["search", "q5"],
            "kind": "demote",
            "slot": "O.job",
            "note": "tide-table memory ranked out of top-k",
        },
        {
            "id": "g3-f6",
            "op": ["qa", "q6"],
            "kind": "answer",
            "prediction": "the serpent",
            "note": "answers with Osric's instrument",
        },
        {
            "id": "g3-f7",
            "op": ["qa", "q4"],
            "kind": "answer",
            "prediction": "walnuts",
            "note": "non-decisive second fault: q4 is already broken by g3-f4",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "Where does Wendeline live now?",
            "slots": ["W.city"],
            "gold": "Lowther Fen",
            "ev": ["D3:3"],
            "expect": ["UpdateError", "g3-f3"],
        },
        {
            "qid": "q2",
            "q": "What does Osric collect?",
            "slots": ["O.collect"],
            "gold": "antique barometers",
            "ev": ["D2:3"],
            "distract": ["W.collect"],
            "expect": ["UpdateError", "g3-f1"],
        },
        {
            "qid": "q3",
            "q": "What are the names of Osric's jackdaws?",
            "slots": ["O.bird1", "O.bird2"],
            "tmpl": "{0} and {1}",
            "gold": "Pip and Fennel",
            "ev": ["D1:6"],
            "expect": ["DeletionError", "g3-f2"],
        },
        {
            "qid": "q4",
            "q": "What is Wendeline allergic to?",
            "slots": ["W.allergy"],
            "gold": "hazelnuts",
            "ev": ["D1:9"],
            "expect": ["DeletionError", "g3-f4"],
        },
        {
            "qid": "q5",
            "q": "What does Osric calculate for the harbour authority?",
            "slots": ["O.job"],
            "gold": "tide tables",
            "ev": ["D1:4"],
            "expect": ["RetrievalError", "g3-f5"],
        },
        {
            "qid": "q6",
            "q": "What instrument is Wendeline learning?",
            "slots": ["W.instrument"],
            "gold": "the nyckelharpa",
            "ev": ["D1:11"],
            "distract": ["O.instrument"],
            "expect": ["ResponseError", "g3-f6"],
        },
        {
            "qid": "q7",
            "q": "What is Wendeline's role at the foundry now?",
            "slots": ["W.job"],
            "gold": "bell tuner",
            "ev": ["D3:1"],
            "expect": None,
        },
        {
            "qid": "q8",
            "q": "Where is Wendeline going on her cycling holiday?",
            "slots": ["W.holiday"],
            "gold": "the Jura",
            "ev": ["D3:6"],
            "expect": None,
        },
        {
            "qid": "q9",
            "q": "Which instrument does Osric play?",
            "slots": ["O.instrument"],
            "gold": "the serpent",
            "ev": ["D2:1"],
            "distract": ["W.instrument"],
            "expect": None,
        },
        {
            "qid": "q10",
            "q": "Which town does Osric live in?",
            "slots": ["O.city"],
            "gold": "Gullsbridge",
            "ev": ["D1:4"],
            "expect": None,
        },
    ],
}

# ---------------------------------------------------------------- graph 4
G4 = {
    "name": "perpetua-dag",
    "speakers": {"P": "Perpetua", "D": "Dag"},
    "conventions": {
        "top_k": 4,
        "message": "plain",
        "fenced": True,
        "prompt": "B",
        "golden": "list",
        "judge": "json",
    },
    "sessions": [
        {
            "date": "2023-05-06 07:50",
            "msgs": [
                (
                    "P",
                    "Morning Dag. I'm at Lock 14 already, the boats start queueing at seven.",
                    [F("P.lock", "Perpetua keeps Lock 14 on the Marrowby Cut", "Lock 14")],
                ),
                ("D", "You and your locks. Don't you ever sleep?", []),
                (
                    "P",
                    "Not much! Being lock-keeper on the Marrowby Cut is a dawn job.",
                    [
                        F(
                            "P.job",
                            "Perpetua is a lock-keeper on the Marrowby Cut",
                            "lock-keeper on the Marrowby Cut",
                        )
                    ],
                ),
                (
                    "D",
                    "I'm the opposite. I make wigs for the Orpington Opera and work till midnight.",
                    [F("D.job", "Dag makes wigs for the Orpington Opera", "the Orpington Opera")],
                ),
                ("P", "Speaking of night owls, Gunnel howled at the moon again.", []),
                ("D", "Your greyhound has opinions.", []),
                (
                    "P",
                    "Three legs and a lot of opinions. Gunnel turned nine this week.",
                    [F("P.dog", "Perpetua has a three-legged greyhound named Gunnel", "Gunnel")],
                ),
                (
                    "D",
                    "Marzipan, my cat, just glares at everyone in Cressing Vale.",
                    [
                        F("D.cat", "Dag has a cat named Marzipan", "Marzipan"),
                        F("D.city", "Dag lives in Cressing Vale", "Cressing Vale"),
                    ],
                ),
                (
                    "P",
                    "Cats are like that. I live on my narrowboat, the Drowsy Heron, so Gunnel has a tiny kingdom.",
                    [F("P.boat", "Perpetua's narrowboat is called the Drowsy Heron", "the Drowsy Heron")],
                ),
                (
                    "D",
                    "I'd love a tour. I get seasick on anything bigger than a rowing boat, though.",
                    [F("D.seasick", "Dag gets seasick on boats bigger than a rowing boat", "seasick")],
                ),
                ("D", "Anyway, rehearsal calls. Bye!", []),
            ],
        },
        {
            "date": "2023-07-09 22:05",
            "msgs": [
                (
                    "D",
                    "Hobby update: I've got two now, beekeeping and fencing. The foil kind.",
                    [
                        F("D.hobby1", "Dag keeps bees", "beekeeping"),
                        F("D.hobby2", "Dag does foil fencing", "fencing"),
                    ],
                ),
                ("P", "Bees and blades.", []),
                (
                    "D",
                    "I'm also putting on an exhibition of my opera wigs at the Cressing library in October.",
                    [
                        F(
                            "D.exhibit",
                            "Dag plans an exhibition of his opera wigs at the Cressing library in October",
                            "exhibition of opera wigs",
                        )
                    ],
                ),
                (
                    "P",
                    "I'll come. Next May I plan to walk the whole Marrowby Cut towpath, end to end.",
                    [
                        F(
                            "P.plan",
                            "Perpetua plans to walk the whole Marrowby Cut towpath next May",
                            "walk the whole Marrowby Cut towpath",
                        )
                    ],
                ),
                ("D", "Bring Gunnel.", []),
                ("P", "Only the flat bits. She's not a hiker.", []),
                (
                    "D",
                    "I drink green tea now, by the way. No more coffee.",
                    [F("D.tea", "Dag drinks green tea instead of coffee", "green tea")],
                ),
                ("P", "Who are you?", []),
                (
                    "D",
                    "I've been sketching a boat for the set designer. We're calling her the Sleepy Egret.",
                    [
                        F(
                            "D.setboat",
                            "Dag is sketching a stage boat called the Sleepy Egret",
                            "the Sleepy Egret",
                        )
                    ],
                ),
                ("P", "Cute name.", []),
            ],
        },
        {
            "date": "2023-10-01 13:40",
            "msgs": [
                (
                    "D",
                    "Career change! I left the opera. I'm now making wigs at Bellweather Film Studios.",
                    [F("D.job", "Dag makes wigs at Bellweather Film Studios", "Bellweather Film Studios")],
                ),
                ("P", "Film! Fancy.", []),
                (
                    "D",
                    "Which means the library exhibition is cancelled. No time.",
                    [C("D.exhibit", "Dag cancelled his wig exhibition at the Cressing library")],
                ),
                ("P", "Pity. Maybe next year.", []),
                (
                    "D",
                    "And my bees swarmed last week; half the colony went up a lime tree.",
                    [F("D.swarm", "Dag's bees swarmed and half the colony went up a lime tree", "swarmed")],
                ),
                ("P", "Did you catch them?", []),
                (
                    "D",
                    "Mostly. Also: back on coffee. The green tea was a phase.",
                    [C("D.tea", "Dag stopped drinking green tea and is back on coffee")],
                ),
                (
                    "P",
                    "Lock 14 finally got new gates this week.",
                    [F("P.gates", "Lock 14 got new gates", "new gates")],
                ),
                ("D", "Send photos! Talk soon.", []),
                ("P", "Will do.", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g4-f1",
            "op": ["extract", "D1:7"],
            "kind": "distort",
            "fact": "P.dog",
            "text": "Perpetua has a three-legged greyhound named Gunner",
            "value": "Gunner",
            "note": "greyhound name distorted at extraction",
        },
        {
            "id": "g4-f2",
            "op": ["update", "D2:9"],
            "kind": "overwrite",
            "fact": "D.setboat",
            "target": "P.boat",
            "text": "Perpetua's narrowboat is called the Sleepy Egret",
            "value": "the Sleepy Egret",
            "note": "stage boat name overwrites the narrowboat name",
        },
        {
            "id": "g4-f3",
            "op": ["update", "D3:3"],
            "kind": "delete",
            "target": "P.plan",
            "note": "legit DELETE of the exhibition plus wrong DELETE of Perpetua's towpath plan",
        },
        {
            "id": "g4-f4",
            "op": ["update", "D3:5"],
            "kind": "delete",
            "target": "D.hobby1",
            "note": "swarm message deletes the beekeeping hobby",
        },
        {
            "id": "g4-f5",
            "op": ["update", "D3:8"],
            "kind": "delete",
            "target": "D.seasick",
            "note": "fault on a fact nobody asks about",
        },
        {
            "id": "g4-f6",
            "op": ["search", "q5"],
            "kind": "demote",
            "slot": "D.cat",
            "note": "cat memory ranked out of top-k",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "What is Perpetua's narrowboat called?",
            "slots": ["P.boat"],
            "gold": ["the Drowsy Heron", "Drowsy Heron"],
            "ev": ["D1:9"],
            "expect": ["UpdateError", "g4-f2"],
        },
        {
            "qid": "q2",
            "q": "What is Perpetua planning to do next May?",
            "slots": ["P.plan"],
            "gold": ["walk the whole Marrowby Cut towpath"],
            "ev": ["D2:4"],
            "expect": ["DeletionError", "g4-f3"],
        },
        {
            "qid": "q3",
            "q": "What two hobbies does Dag have?",
            "slots": ["D.hobby1", "D.hobby2"],
            "tmpl": "{0} and {1}",
            "gold": ["beekeeping and fencing"],
            "ev": ["D2:1"],
            "expect": ["DeletionError", "g4-f4"],
        },
        {
            "qid": "q4",
            "q": "What is Perpetua's greyhound called?",
            "slots": ["P.dog"],
            "gold": ["Gunnel"],
            "ev": ["D1:7"],
            "expect": ["ExtractionError", "g4-f1"],
        },
        {
            "qid": "q5",
            "q": "What is the name of Dag's cat?",
            "slots": ["D.cat"],
            "gold": ["Marzipan"],
            "ev": ["D1:8"],
            "expect": ["RetrievalError", "g4-f6"],
        },
        {
            "qid": "q6",
            "q": "Where does Dag work now?",
            "slots": ["D.job"],
            "gold": ["Bellweather Film Studios"],
            "ev": ["D3:1"],
            "expect": None,
        },
        {
            "qid": "q7",
            "q": "Which lock does Perpetua keep?",
            "slots": ["P.lock"],
            "gold": ["Lock 14"],
            "ev": ["D1:1"],
            "expect": None,
        },
        {
            "qid": "q8",
            "q": "Where does Dag live?",
            "slots": ["D.city"],
            "gold": ["Cressing Vale"],
            "ev": ["D1:8"],
            "expect": None,
        },
    ],
}

# ---------------------------------------------------------------- graph 5
G5 = {
    "name": "ignatia-ruairi",
    "speakers": {"I": "Ignatia", "R": "Ruairi"},
    "conventions": {
        "top_k": 6,
        "message": "json",
        "fenced": True,
        "prompt": "B",
        "golden": "string",
        "judge": "yesno",
    },
    "sessions": [
        {
            "date": "2023-08-12 10:30",
            "msgs": [
                (
                    "I",
                    "Ruairi, greetings from the seed vault! Thornwick is sweltering.",
                    [F("I.city", "Ignatia lives in Thornwick", "Thornwick")],
                ),
                ("R", "Seed vault? Remind me what you do there.", []),
                (
                    "I",
                    "I'm an archivist at the Carrow Seed Bank. I catalogue heirloom seeds.",
                    [
                        F(
                            "I.job",
                            "Ignatia is a seed-vault archivist at the Carrow Seed Bank",
                            "seed-vault archivist at the Carrow Seed Bank",
                        )
                    ],
                ),
                (
                    "R",
                    "Lovely. I'm still a hot-air balloon pilot, dawn flights over the downs.",
                    [F("R.job", "Ruairi is a hot-air balloon pilot", "hot-air balloon pilot")],
                ),
                ("I", "Which balloon these days?", []),
                (
                    "R",
                    "The Blue Dunlin, the old wicker one.",
                    [F("R.balloon", "Ruairi flies the Blue Dunlin balloon", "the Blue Dunlin")],
                ),
                (
                    "I",
                    "At home I grow dragon-tongue beans and skirret on the allotment.",
                    [
                        F("I.crop1", "Ignatia grows dragon-tongue beans", "dragon-tongue beans"),
                        F("I.crop2", "Ignatia grows skirret", "skirret"),
                    ],
                ),
                ("R", "Skirret? Never heard of it.", []),
                ("I", "A Tudor root vegetable. Tastes like parsnip and regret.", []),
                (
                    "R",
                    "Ha! My tarantula, Opaline, would eat neither.",
                    [F("R.pet", "Ruairi has a tarantula named Opaline", "Opaline")],
                ),
                (
                    "I",
                    "I only have Opal, my leopard gecko. She's drama enough.",
                    [F("I.pet", "Ignatia has a leopard gecko named Opal", "Opal")],
                ),
            ],
        },
        {
            "date": "2023-10-03 18:00",
            "msgs": [
                (
                    "R",
                    "Exam news: my commercial balloon licence exam is on the 14th of October.",
                    [F("R.exam", "Ruairi's commercial balloon licence exam is on 14 October", "14 October")],
                ),
                ("I", "You'll pass. Revise the weather charts.", []),
                (
                    "R",
                    "And the Thornwick balloon festival is booked for November. We're flying in it.",
                    [
                        F(
                            "R.festival",
                            "Ruairi plans to fly in the Thornwick balloon festival in November",
                            "the Thornwick balloon festival",
                        )
                    ],
                ),
                ("I", "I'll watch from the allotment.", []),
                (
                    "R",
                    "Opaline moulted last night and left a perfect ghost of herself.",
                    [F("R.moult", "Ruairi's tarantula Opaline moulted", "moulted")],
                ),
                ("I", "Creepy and beautiful.", []),
                (
                    "I",
                    "Also, I'm learning to bind books. The archive has a little bindery.",
                    [F("I.hobby", "Ignatia is learning bookbinding", "bookbinding")],
                ),
                ("R", "Useful for a seed catalogue.", []),
                ("I", "Exactly. Anyway, I must feed Opal.", []),
                ("R", "Go on then. Talk soon.", []),
            ],
        },
        {
            "date": "2023-11-20 09:45",
            "msgs": [
                (
                    "R",
                    "Switched balloons! I'm flying the Marigold Comet now; the Blue Dunlin is retired.",
                    [F("R.balloon", "Ruairi flies the Marigold Comet balloon", "the Marigold Comet")],
                ),
                ("I", "A comet! Very dramatic.", []),
                (
                    "R",
                    "Bad news though: the Thornwick balloon festival got cancelled. Council permits.",
                    [
                        C(
                            "R.festival",
                            "The Thornwick balloon festival Ruairi planned to fly in was cancelled",
                        )
                    ],
                ),
                ("I", "That's a shame.", []),
                (
                    "I",
                    "My own news: I've moved to Esker Moor, closer to the seed bank's new site.",
                    [F("I.city", "Ignatia lives in Esker Moor", "Esker Moor")],
                ),
                ("R", "Esker Moor has good thermals. I might land in your garden.", []),
                ("I", "Please don't.", []),
                (
                    "R",
                    "Ha. I passed the exam, by the way.",
                    [F("R.examresult", "Ruairi passed his commercial balloon licence exam", "passed")],
                ),
                ("I", "Congratulations!", []),
                ("R", "Thanks! Opaline celebrated by eating a cricket.", []),
                ("I", "Give her my regards.", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g5-f1",
            "op": ["extract", "D2:1"],
            "kind": "drop",
            "fact": "R.exam",
            "note": "exam date dropped at extraction",
        },
        {
            "id": "g5-f2",
            "op": ["update", "D2:5"],
            "kind": "overwrite",
            "fact": "R.moult",
            "target": "I.pet",
            "text": "Ignatia has a leopard gecko named Opaline",
            "value": "Opaline",
            "note": "tarantula's name overwrites the gecko's (look-alike)",
        },
        {
            "id": "g5-f3",
            "op": ["update", "D3:1"],
            "kind": "ignore",
            "fact": "R.balloon",
            "note": "balloon switch ignored",
        },
        {
            "id": "g5-f4",
            "op": ["update", "D3:3"],
            "kind": "delete",
            "target": "I.crop2",
            "note": "legit DELETE of the festival plus wrong DELETE of skirret",
        },
        {
            "id": "g5-f5",
            "op": ["search", "q1"],
            "kind": "demote",
            "slot": "I.pet",
            "note": "non-decisive second fault: q1 is already broken by g5-f2",
        },
        {
            "id": "g5-f6",
            "op": ["qa", "q5"],
            "kind": "answer",
            "prediction": "seed-vault archivist",
            "note": "answers with Ignatia's job",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "What is Ignatia's gecko called?",
            "slots": ["I.pet"],
            "gold": "Opal",
            "ev": ["D1:11"],
            "distract": ["R.pet"],
            "expect": ["UpdateError", "g5-f2"],
        },
        {
            "qid": "q2",
            "q": "Which balloon does Ruairi fly now?",
            "slots": ["R.balloon"],
            "gold": "the Marigold Comet",
            "ev": ["D3:1"],
            "expect": ["UpdateError", "g5-f3"],
        },
        {
            "qid": "q3",
            "q": "Which two crops does Ignatia grow?",
            "slots": ["I.crop1", "I.crop2"],
            "tmpl": "{0} and {1}",
            "gold": "dragon-tongue beans and skirret",
            "ev": ["D1:7"],
            "expect": ["DeletionError", "g5-f4"],
        },
        {
            "qid": "q4",
            "q": "When is Ruairi's commercial balloon licence exam?",
            "slots": ["R.exam"],
            "gold": "14 October",
            "ev": ["D2:1"],
            "expect": ["ExtractionError", "g5-f1"],
        },
        {
            "qid": "q5",
            "q": "What is Ruairi's job?",
            "slots": ["R.job"],
            "gold": "hot-air balloon pilot",
            "ev": ["D1:4"],
            "distract": ["I.job"],
            "expect": ["ResponseError", "g5-f6"],
        },
        {
            "qid": "q6",
            "q": "Where does Ignatia live now?",
            "slots": ["I.city"],
            "gold": "Esker Moor",
            "ev": ["D3:5"],
            "expect": None,
        },
        {
            "qid": "q7",
            "q": "What is Ruairi's tarantula called?",
            "slots": ["R.pet"],
            "gold": "Opaline",
            "ev": ["D1:10"],
            "expect": None,
        },
        {
            "qid": "q8",
            "q": "What is Ignatia's job?",
            "slots": ["I.job"],
            "gold": "seed-vault archivist at the Carrow Seed Bank",
            "ev": ["D1:3"],
            "expect": None,
        },
    ],
}

# ---------------------------------------------------------------- graph 6
G6 = {
    "name": "fenwick-odalys",
    "speakers": {"F": "Fenwick", "O": "Odalys"},
    "conventions": {
        "top_k": 7,
        "message": "plain",
        "fenced": False,
        "prompt": "A",
        "golden": "list",
        "judge": "reason",
    },
    "sessions": [
        {
            "date": "2023-03-03 14:00",
            "msgs": [
                (
                    "F",
                    "Odalys! I'm in a church loft in the Wensum valley, tuning yet another organ.",
                    [
                        F(
                            "F.job",
                            "Fenwick tunes church organs across the Wensum valley",
                            "tunes church organs across the Wensum valley",
                        )
                    ],
                ),
                ("O", "Of course you are. I'm elbow-deep in plaster at the Crane Museum.", []),
                (
                    "O",
                    "I'm a fossil preparator there. I free bones from rock with dental picks.",
                    [F("O.job", "Odalys is a fossil preparator at the Crane Museum", "fossil preparator")],
                ),
                ("F", "Dental picks! My tuning hammer is the size of a spoon.", []),
                (
                    "F",
                    "Pilchard, my old dachshund, is asleep in the van as we speak.",
                    [F("F.dog", "Fenwick has an elderly dachshund named Pilchard", "Pilchard")],
                ),
                ("O", "Still the Citroen?", []),
                (
                    "F",
                    "Still the 1971 Citroen H van. I call it Gustave.",
                    [F("F.van", "Fenwick drives a 1971 Citroen H van named Gustave", "Gustave")],
                ),
                ("O", "Gustave and Pilchard, a touring duo.", []),
                (
                    "O",
                    "My hamster Nutmeg sends regards from Charmbury.",
                    [
                        F("O.hamster", "Odalys has a hamster named Nutmeg", "Nutmeg"),
                        F("O.city", "Odalys lives in Charmbury", "Charmbury"),
                    ],
                ),
                ("F", "Regards returned.", []),
            ],
        },
        {
            "date": "2023-04-22 19:30",
            "msgs": [
                (
                    "O",
                    "Last summer I found two good fossils on the coast: an ammonite and a crinoid.",
                    [
                        F("O.find1", "Odalys found an ammonite last summer", "an ammonite"),
                        F("O.find2", "Odalys found a crinoid last summer", "a crinoid"),
                    ],
                ),
                ("F", "Which one did you keep?", []),
                ("O", "Both are in my kitchen, to my flatmate's horror.", []),
                (
                    "O",
                    "In March next year I'm going fossil-hunting at Lyme.",
                    [F("O.trip", "Odalys plans to go fossil-hunting at Lyme in March", "Lyme")],
                ),
                ("F", "Bring me a belemnite.", []),
                (
                    "O",
                    "My favourite biscuit is the garibaldi, in case you're visiting.",
                    [F("O.biscuit", "Odalys's favourite biscuit is the garibaldi", "the garibaldi")],
                ),
                ("F", "Noted, garibaldis it is.", []),
                ("F", "Work's busy: twelve organs before Easter.", []),
                ("O", "Pace yourself.", []),
            ],
        },
        {
            "date": "2023-08-14 11:05",
            "msgs": [
                (
                    "F",
                    "News! I've been hired as the resident organ tuner at St Gall's Cathedral. No more touring.",
                    [
                        F(
                            "F.job",
                            "Fenwick is the resident organ tuner at St Gall's Cathedral",
                            "resident organ tuner at St Gall's Cathedral",
                        )
                    ],
                ),
                ("O", "A cathedral! Settled at last.", []),
                (
                    "O",
                    "Sad news here: Nutmeg died on Sunday. She was very old.",
                    [C("O.hamster", "Odalys's hamster Nutmeg died")],
                ),
                ("F", "I'm so sorry. Hamsters are brave little things.", []),
                ("O", "Thank you. I buried her under the rosemary.", []),
                ("F", "I'll send you some flowers.", []),
                ("O", "Ha. Thank you.", []),
            ],
        },
        {
            "date": "2023-10-09 17:20",
            "msgs": [
                (
                    "O",
                    "Change of plan for March: not Lyme any more, we're going fossil-hunting at Whitby instead.",
                    [F("O.trip", "Odalys plans to go fossil-hunting at Whitby in March", "Whitby")],
                ),
                ("F", "Whitby! Jet and ammonites.", []),
                (
                    "F",
                    "The cathedral organ has four thousand pipes and I've met maybe three hundred of them.",
                    [],
                ),
                ("O", "Introduce yourself to the rest slowly.", []),
                (
                    "F",
                    "Gustave failed his MOT, by the way. New brakes needed.",
                    [
                        F(
                            "F.vanmot",
                            "Fenwick's van Gustave failed its MOT and needs new brakes",
                            "failed its MOT",
                        )
                    ],
                ),
                ("O", "Poor Gustave.", []),
                ("O", "Talk soon!", []),
            ],
        },
    ],
    "faults": [
        {
            "id": "g6-f1",
            "op": ["extract", "D2:6"],
            "kind": "distort",
            "fact": "O.biscuit",
            "text": "Odalys's favourite biscuit is the bourbon",
            "value": "the bourbon",
            "note": "fault on a fact nobody asks about",
        },
        {
            "id": "g6-f2",
            "op": ["update", "D3:3"],
            "kind": "delete",
            "target": "F.dog",
            "replace_fact": "O.hamster",
            "note": "hamster's death deletes Fenwick's live dachshund instead",
        },
        {
            "id": "g6-f3",
            "op": ["update", "D4:1"],
            "kind": "ignore",
            "fact": "O.trip",
            "note": "changed plan ignored, memory keeps Lyme",
        },
        {
            "id": "g6-f4",
            "op": ["search", "q3"],
            "kind": "demote",
            "slot": "O.job",
            "note": "job memory ranked out of top-k",
        },
    ],
    "questions": [
        {
            "qid": "q1",
            "q": "Where is Odalys going fossil-hunting in March?",
            "slots": ["O.trip"],
            "gold": ["Whitby"],
            "ev": ["D4:1"],
            "expect": ["UpdateError", "g6-f3"],
        },
        {
            "qid": "q2",
            "q": "What is Fenwick's dog called?",
            "slots": ["F.dog"],
            "gold": ["Pilchard"],
            "ev": ["D1:5"],
            "expect": ["DeletionError", "g6-f2"],
        },
        {
            "qid": "q3",
            "q": "What does Odalys do at the Crane Museum?",
            "slots": ["O.job"],
            "gold": ["fossil preparator", "she is a fossil preparator"],
            "ev": ["D1:3"],
            "expect": ["RetrievalError", "g6-f4"],
        },
        {
            "qid": "q4",
            "q": "Where does Fenwick work now?",
            "slots": ["F.job"],
            "gold": ["resident organ tuner at St Gall's Cathedral", "St Gall's Cathedral"],
            "ev": ["D3:1"],
            "expect": None,
        },
        {
            "qid": "q5",
            "q": "Which two fossils did Odalys find last summer?",
            "slots": ["O.find1", "O.find2"],
            "tmpl": "{0} and {1}",
            "gold": ["an ammonite and a crinoid"],
            "ev": ["D2:1"],
            "expect": None,
        },
        {
            "qid": "q6",
            "q": "Where does Odalys live?",
            "slots": ["O.city"],
            "gold": ["Charmbury"],
            "ev": ["D1:9"],
            "expect": None,
        },
        {
            "qid": "q7",
            "q": "What is Fenwick's van called?",
            "slots": ["F.van"],
            "gold": ["Gustave"],
            "ev": ["D1:7"],
            "expect": None,
        },
    ],
}

CONVERSATIONS = [G1, G2, G3, G4, G5, G6]
