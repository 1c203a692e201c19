"""Vocabulary the sample conversation draws from; the seed picks one combination deterministically.

Pools are disjoint where a mix-up would make a question ambiguous (dog vs cat names, people vs pets).
Entries must keep their content words literal, since answers are checked against the evidence text.
"""

from __future__ import annotations

PEOPLE = (
    "Maya", "Jonas", "Priya", "Leo", "Sofia", "Daniel", "Aisha", "Tom",
    "Elena", "Marcus", "Nina", "Omar", "Clara", "Ravi", "Hannah", "Diego",
)  # fmt: skip
SISTERS = ("Rosa", "Ingrid", "Mei", "Fatima", "Chloe", "Greta")
CITIES = (
    "Lisbon", "Denver", "Austin", "Seattle", "Toronto", "Dublin",
    "Melbourne", "Boston", "Chicago", "Vancouver", "Edinburgh", "Portland",
)  # fmt: skip
JOBS = (
    "graphic designer", "software engineer", "accountant", "marketing manager",
    "data analyst", "product manager", "architect", "copywriter",
)  # fmt: skip
COMPANIES = (
    "Brightline Studio", "Northwind Labs", "Bluepeak Finance", "Harbor Works",
    "Greenleaf Media", "Summit Robotics", "Copperfield Partners", "Lumen Health",
)  # fmt: skip
#: (job, workplace) of the friend, whose job never changes.
FRIEND_JOBS = (
    ("nurse", "city hospital"),
    ("teacher", "elementary school"),
    ("chef", "seafood restaurant"),
    ("pharmacist", "corner pharmacy"),
    ("librarian", "public library"),
    ("veterinarian", "animal clinic"),
)
INSTRUMENTS = ("bass", "drums", "guitar", "keyboard", "saxophone", "violin")
BANDS = ("The Midnight Owls", "Paper Lanterns", "Velvet Static", "The Rusty Kettles", "Neon Orchard")
DOGS = ("Max", "Biscuit", "Luna", "Pepper", "Rocky", "Milo", "Hazel", "Bruno")
BREEDS = ("beagle", "border collie", "golden retriever", "corgi", "labrador", "dachshund")
CATS = ("Mochi", "Whiskers", "Cleo", "Ziggy", "Nala", "Olive", "Pumpkin")
CAT_COLORS = ("grey", "orange", "black", "white")
HOBBIES = ("pottery", "birdwatching", "chess", "photography", "woodworking", "gardening")
OLD_EXERCISE = ("yoga", "pilates", "kickboxing", "spin classes")
NEW_EXERCISE = ("rock climbing", "trail running", "rowing", "salsa dancing")
RACES = ("half marathon", "10K race", "trail race")
BOOKS = ("The Midnight Library", "Project Hail Mary", "Circe", "Educated", "Klara and the Sun")
DISHES = ("lasagna", "paella", "ramen", "chicken curry", "mushroom risotto")
#: (place, caption of the photo the friend shares from the trip).
TRIPS = (
    ("Kyoto", "a photo of a red temple gate among green trees"),
    ("Iceland", "a photo of a waterfall over black rocks"),
    ("Banff", "a photo of a turquoise lake below snowy mountains"),
    ("Lake Como", "a photo of colorful houses by a lake"),
    ("Yosemite", "a photo of a granite cliff above a valley"),
)
GREETINGS = (
    "Hey {other}! It's been a while. How are things with you?",
    "Hi {other}! So good to catch up again. How have you been?",
    "Hey {other}, long time no talk! What's new?",
)
SIGN_OFFS = (
    "Anyway, I have to run. Talk to you soon!",
    "I should get going, but this was fun. Catch you later!",
    "Gotta go now. Let's talk again soon!",
)
REPLIES = (
    "Ha, that's great to hear!",
    "Wow, I love that!",
    "That sounds like a lot of fun.",
    "Good for you, seriously.",
)
