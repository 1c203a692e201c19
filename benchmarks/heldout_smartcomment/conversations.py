"""Hand-written conversations for the held-out smartcomment set (not LoCoMo, not memtrace's sample).

Each message carries the facts an ideal Mem0 fact extractor would pull out of it, as (slot, text):
a fact whose slot already has a live memory is an UPDATE of that memory, otherwise an ADD.
Each question lists its evidence message ids (LoCoMo-style `D<session>:<turn>`) and gold answers.
"""

from __future__ import annotations

CONVERSATIONS = [
    {
        "conv": "maya_theo",
        "speakers": ["Maya", "Theo"],
        "sessions": [
            {
                "date": "2025-03-02 18:10",
                "messages": [
                    (
                        "D1:1",
                        "Maya",
                        "Hey Theo! Big news, I finally adopted a dog, a beagle named Pico.",
                        [("pet", "Adopted a beagle named Pico")],
                    ),
                    (
                        "D1:2",
                        "Theo",
                        "That's wonderful! I started a job as a pastry chef at Crumb & Co.",
                        [("theo_job", "Theo works as a pastry chef at Crumb & Co")],
                    ),
                    (
                        "D1:3",
                        "Maya",
                        "My sister Lena is a nurse in Leeds, she says hi.",
                        [("lena", "Sister Lena is a nurse in Leeds")],
                    ),
                    ("D1:4", "Theo", "Say hi back. Are you still living in Denver?", []),
                    (
                        "D1:5",
                        "Maya",
                        "Yes, still in Denver, but I'm thinking about moving to Portland.",
                        [("maya_city", "Lives in Denver, considering a move to Portland")],
                    ),
                    (
                        "D1:6",
                        "Theo",
                        "I'm learning the cello on weekends, it's harder than I thought.",
                        [("theo_hobby", "Theo is learning the cello on weekends")],
                    ),
                ],
            },
            {
                "date": "2025-04-14 20:05",
                "messages": [
                    (
                        "D2:1",
                        "Maya",
                        "I signed up for the Riverside half marathon in June.",
                        [("race", "Signed up for the Riverside half marathon in June")],
                    ),
                    (
                        "D2:2",
                        "Theo",
                        "Nice! My bakery shifts moved to early mornings, 4am starts.",
                        [("theo_shift", "Theo's bakery shifts start at 4am")],
                    ),
                    (
                        "D2:3",
                        "Maya",
                        "Lena is visiting next week and bringing her twins.",
                        [("lena_visit", "Sister Lena is visiting next week with her twins")],
                    ),
                    ("D2:4", "Theo", "What is Pico's favorite toy these days?", []),
                    (
                        "D2:5",
                        "Maya",
                        "A squeaky orange carrot, he carries it everywhere.",
                        [("pico_toy", "Pico's favorite toy is a squeaky orange carrot")],
                    ),
                    (
                        "D2:6",
                        "Theo",
                        "I bought a secondhand cello from a little shop called Fermata.",
                        [("theo_cello", "Theo bought a secondhand cello from a shop called Fermata")],
                    ),
                ],
            },
            {
                "date": "2025-05-20 19:30",
                "messages": [
                    (
                        "D3:1",
                        "Maya",
                        "We did it, we moved to Portland last weekend!",
                        [("maya_city", "Moved to Portland")],
                    ),
                    (
                        "D3:2",
                        "Theo",
                        "Congrats! And I got promoted to head baker.",
                        [("theo_job", "Theo was promoted to head baker at Crumb & Co")],
                    ),
                    (
                        "D3:3",
                        "Maya",
                        "Pico hated the car ride, but he loves the new yard.",
                        [("pico_yard", "Pico loves the new yard")],
                    ),
                    ("D3:4", "Theo", "Are you still running the half marathon?", []),
                    (
                        "D3:5",
                        "Maya",
                        "Yes, and my goal is to finish under two hours.",
                        [("race_goal", "Goal is to finish the half marathon under two hours")],
                    ),
                    ("D3:6", "Theo", "I'll come and cheer with a big sign.", []),
                ],
            },
        ],
        "questions": [
            ("q1", "What breed is Maya's dog?", ["beagle"], ["D1:1"]),
            ("q2", "What does Maya's sister Lena do for work?", ["nurse"], ["D1:3"]),
            ("q3", "Where does Theo work?", ["Crumb & Co"], ["D1:2"]),
            ("q4", "Which city did Maya move to?", ["Portland"], ["D3:1"]),
            ("q5", "What is Pico's favorite toy?", ["squeaky orange carrot"], ["D2:5"]),
            ("q6", "Where did Theo buy his cello?", ["Fermata"], ["D2:6"]),
            ("q7", "Which half marathon did Maya sign up for?", ["Riverside"], ["D2:1"]),
            ("q8", "What time do Theo's bakery shifts start?", ["4am"], ["D2:2"]),
            ("q9", "What is Maya's goal time for the half marathon?", ["under two hours"], ["D3:5"]),
        ],
    },
    {
        "conv": "priya_jonas",
        "speakers": ["Priya", "Jonas"],
        "sessions": [
            {
                "date": "2025-01-10 12:40",
                "messages": [
                    (
                        "D1:1",
                        "Priya",
                        "I just got back from Lisbon, the tiles everywhere were gorgeous.",
                        [("trip", "Priya visited Lisbon")],
                    ),
                    (
                        "D1:2",
                        "Jonas",
                        "Jealous. I'm stuck renovating my kitchen, we chose green cabinets.",
                        [("kitchen", "Jonas is renovating his kitchen with green cabinets")],
                    ),
                    (
                        "D1:3",
                        "Priya",
                        "My daughter Asha started violin lessons on Tuesdays.",
                        [("asha", "Daughter Asha takes violin lessons on Tuesdays")],
                    ),
                    (
                        "D1:4",
                        "Jonas",
                        "My brother Elias just moved in with us for a while.",
                        [("elias", "Jonas's brother Elias moved in with him")],
                    ),
                    (
                        "D1:5",
                        "Priya",
                        "I'm allergic to peanuts, so no satay at the party please.",
                        [("allergy", "Priya is allergic to peanuts")],
                    ),
                    (
                        "D1:6",
                        "Jonas",
                        "Noted! The party is at my place on the 22nd.",
                        [("party", "Jonas hosts a party on the 22nd")],
                    ),
                ],
            },
            {
                "date": "2025-02-08 09:15",
                "messages": [
                    (
                        "D2:1",
                        "Jonas",
                        "The kitchen is done, and we switched to navy cabinets in the end.",
                        [("kitchen", "Jonas finished his kitchen with navy cabinets")],
                    ),
                    (
                        "D2:2",
                        "Priya",
                        "I adopted two cats, Miso and Tofu.",
                        [("cats", "Priya adopted two cats named Miso and Tofu")],
                    ),
                    (
                        "D2:3",
                        "Jonas",
                        "Elias found a job at the planetarium.",
                        [("elias_job", "Elias works at the planetarium")],
                    ),
                    (
                        "D2:4",
                        "Priya",
                        "Asha wants to switch from violin to cello.",
                        [("asha", "Asha wants to switch from violin to cello")],
                    ),
                    (
                        "D2:5",
                        "Jonas",
                        "I'm training for a climbing trip to Kalymnos in May.",
                        [("climb", "Jonas is training for a climbing trip to Kalymnos in May")],
                    ),
                    (
                        "D2:6",
                        "Priya",
                        "I'm reading a novel called The Salt Orchard for my book club.",
                        [("book", "Priya is reading The Salt Orchard for her book club")],
                    ),
                ],
            },
            {
                "date": "2025-03-15 17:50",
                "messages": [
                    (
                        "D3:1",
                        "Priya",
                        "Miso knocked my laptop off the desk, I had to buy a new one.",
                        [
                            (
                                "laptop",
                                "Priya bought a new laptop after her cat knocked the old one off the desk",
                            )
                        ],
                    ),
                    (
                        "D3:2",
                        "Jonas",
                        "Elias moved out last week, he found an apartment near work.",
                        [("elias", "Elias moved out to an apartment near his work")],
                    ),
                    (
                        "D3:3",
                        "Priya",
                        "Book club picked Harbor Lights as the next book.",
                        [("book_next", "Book club's next book is Harbor Lights")],
                    ),
                    (
                        "D3:4",
                        "Jonas",
                        "My climbing partner is Ines, she's much better than me.",
                        [("climb_partner", "Jonas's climbing partner is Ines")],
                    ),
                    (
                        "D3:5",
                        "Priya",
                        "Asha's recital is on April 12th.",
                        [("recital", "Asha's recital is on April 12th")],
                    ),
                    ("D3:6", "Jonas", "I'll bring flowers for her.", []),
                ],
            },
        ],
        "questions": [
            ("q1", "Which city did Priya visit?", ["Lisbon"], ["D1:1"]),
            ("q2", "What is Priya allergic to?", ["peanuts"], ["D1:5"]),
            ("q3", "What color cabinets did Jonas end up with?", ["navy"], ["D2:1"]),
            ("q4", "What are the names of Priya's cats?", ["Miso and Tofu"], ["D2:2"]),
            ("q5", "Where does Elias work?", ["planetarium"], ["D2:3"]),
            ("q6", "Where is Jonas going climbing?", ["Kalymnos"], ["D2:5"]),
            ("q7", "Who is Jonas's climbing partner?", ["Ines"], ["D3:4"]),
            ("q8", "When is Asha's recital?", ["April 12th"], ["D3:5"]),
            ("q9", "What novel is Priya reading for her book club?", ["The Salt Orchard"], ["D2:6"]),
        ],
    },
    {
        "conv": "sam_rosa",
        "speakers": ["Sam", "Rosa"],
        "sessions": [
            {
                "date": "2025-06-01 10:20",
                "messages": [
                    (
                        "D1:1",
                        "Sam",
                        "I planted tomatoes and basil in the community garden, plot 14.",
                        [("garden", "Sam grows tomatoes and basil in community garden plot 14")],
                    ),
                    (
                        "D1:2",
                        "Rosa",
                        "I'm taking a pottery class at the Kiln House on Thursdays.",
                        [("pottery", "Rosa takes a pottery class at the Kiln House on Thursdays")],
                    ),
                    (
                        "D1:3",
                        "Sam",
                        "My car is in the shop, the mechanic says it needs a new clutch.",
                        [("car", "Sam's car needs a new clutch")],
                    ),
                    (
                        "D1:4",
                        "Rosa",
                        "My grandson Mateo turns five in July.",
                        [("mateo", "Rosa's grandson Mateo turns five in July")],
                    ),
                    (
                        "D1:5",
                        "Sam",
                        "I'm switching to night shifts at the hospital lab.",
                        [("sam_job", "Sam works night shifts at the hospital lab")],
                    ),
                    (
                        "D1:6",
                        "Rosa",
                        "Our building's new super is called Mr. Okafor.",
                        [("super", "The building's new superintendent is Mr. Okafor")],
                    ),
                ],
            },
            {
                "date": "2025-07-05 16:45",
                "messages": [
                    (
                        "D2:1",
                        "Rosa",
                        "Mateo's party had a dinosaur theme, he loved it.",
                        [("mateo_party", "Mateo's birthday party had a dinosaur theme")],
                    ),
                    (
                        "D2:2",
                        "Sam",
                        "I got the car back, the clutch repair cost 900 dollars.",
                        [("car", "Sam's clutch repair cost 900 dollars")],
                    ),
                    (
                        "D2:3",
                        "Rosa",
                        "I made a blue glazed teapot in pottery class.",
                        [("teapot", "Rosa made a blue glazed teapot in pottery class")],
                    ),
                    (
                        "D2:4",
                        "Sam",
                        "The tomatoes got blight, I'm replanting the plot with peppers.",
                        [
                            (
                                "garden",
                                "Sam replaced his blighted tomatoes with peppers in community garden plot 14",
                            )
                        ],
                    ),
                    (
                        "D2:5",
                        "Rosa",
                        "I'm planning a trip to Oaxaca in October to see my cousin.",
                        [("trip", "Rosa plans a trip to Oaxaca in October to see her cousin")],
                    ),
                    ("D2:6", "Sam", "Bring me back some mole!", []),
                ],
            },
            {
                "date": "2025-08-10 11:05",
                "messages": [
                    (
                        "D3:1",
                        "Sam",
                        "I adopted a rescue parrot named Captain.",
                        [("parrot", "Sam adopted a rescue parrot named Captain")],
                    ),
                    (
                        "D3:2",
                        "Rosa",
                        "The super finally fixed the elevator.",
                        [("elevator", "The building's elevator was fixed by the super")],
                    ),
                    (
                        "D3:3",
                        "Sam",
                        "My bird already says hello in Spanish, you taught him well.",
                        [("bird_words", "Sam's bird says hello in Spanish")],
                    ),
                    (
                        "D3:4",
                        "Rosa",
                        "My cousin runs a small bakery called Pan de Luz.",
                        [("cousin", "Rosa's cousin runs a bakery called Pan de Luz")],
                    ),
                    (
                        "D3:5",
                        "Sam",
                        "I'm back to day shifts starting September.",
                        [("sam_job", "Sam returns to day shifts at the hospital lab in September")],
                    ),
                    ("D3:6", "Rosa", "Good, you looked tired.", []),
                ],
            },
        ],
        "questions": [
            ("q1", "What number is Sam's community garden plot?", ["14"], ["D1:1"]),
            ("q2", "Where does Rosa take her pottery class?", ["Kiln House"], ["D1:2"]),
            ("q3", "How much did Sam's clutch repair cost?", ["900 dollars"], ["D2:2"]),
            ("q4", "What theme was Mateo's birthday party?", ["dinosaur"], ["D2:1"]),
            ("q5", "What did Rosa make in pottery class?", ["blue glazed teapot"], ["D2:3"]),
            ("q6", "What is the name of Sam's parrot?", ["Captain"], ["D3:1"]),
            ("q7", "What is the name of the bakery Rosa's cousin runs?", ["Pan de Luz"], ["D3:4"]),
            ("q8", "Who is the building's superintendent?", ["Mr. Okafor"], ["D1:6"]),
            ("q9", "Where is Rosa traveling in October?", ["Oaxaca"], ["D2:5"]),
        ],
    },
]
