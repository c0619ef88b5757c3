"""A generated English multi-session chat set for episodic recall (deterministic, seeded).

Run from the project root to look at it::

    .venv/bin/python benchmarks/recall_people_data.py --dump 0   # one conversation

``benchmarks/recall_dev.py`` loads it as ``people-en``. It is a *mechanism check*, not a
target: generated text is easy to fit, so no threshold is chosen on it alone.

What it models: two friends chatting over a dozen sessions (one memory scope per pair),
each turn one entry ("Name: what they said", then the friend's reply, as one run is
stored). Most turns are small talk drawn from one pool shared by every pair (work, the
weather, dinner, the weekend), so that ordinary words recur across scopes; a few turns a
session state a life event of one speaker (an adopted pet with its name, a trip to a
city, a painting, a book, a workshop, a new job, a race), drawn from one catalogue for
every pair, so that another pair often has an event of the same kind with other details.

Questions name the person, as questions about a conversation between people do
("What is the name of the dog Nadia adopted?", "Which city did Omar fly to for the
conference?"), in words that differ from the turn in part (dog / puppy). Relevant: the
turn that states the event and the friend's reply that echoes its detail. ``none``
questions ask about an event of a kind the person never had. False injection: each
answerable question asked against another pair's conversation, where the name is
unknown and events of the same kind have other details.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

SEED = 20261202
N_PAIRS = 16
SESSIONS = (10, 14)
TURNS_PER_SESSION = (8, 14)
EVENTS_PER_SESSION = (0, 2)

NAMES = [
    "Nadia",
    "Omar",
    "Priya",
    "Tomas",
    "Leila",
    "Marcus",
    "Hana",
    "Diego",
    "Ingrid",
    "Kofi",
    "Sofia",
    "Ravi",
    "Elena",
    "Jonah",
    "Amara",
    "Felix",
    "Yuki",
    "Mateo",
    "Chloe",
    "Arjun",
    "Greta",
    "Samir",
    "Naomi",
    "Lucas",
    "Zara",
    "Emil",
    "Maya",
    "Theo",
    "Ines",
    "Kenji",
    "Olga",
    "Bruno",
]

# kind -> (statement templates, reply templates, question templates, detail pools)
# {d} is the detail, {d2} a second detail; questions use {name}.
EVENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "pet": {
        "say": (
            "We finally adopted a {d2} from the shelter, we named him {d}!",
            "Big news, I brought home a little {d2} last weekend. His name is {d}.",
        ),
        "reply": (
            "{d} is such a cute name, I hope he settles in well.",
            "Aww, a {d2}! Send me photos of {d}.",
        ),
        "ask": (
            "What is the name of the {d2q} {name} adopted?",
            "What did {name} name the new pet?",
        ),
        "d": (
            "Biscuit",
            "Pepper",
            "Mochi",
            "Rocket",
            "Waffles",
            "Ziggy",
            "Bruno",
            "Oreo",
            "Maple",
            "Noodle",
        ),
        "d2": ("puppy", "kitten", "rabbit", "parrot"),
    },
    "trip": {
        "say": (
            "I just got back from {d}, I flew there for a {d2} and stayed a few extra days.",
            "Work sent me to {d} for a {d2}, the old town was beautiful.",
        ),
        "reply": ("{d} sounds amazing, was the {d2} useful?", "I've always wanted to see {d}!"),
        "ask": (
            "Which city did {name} travel to for the {d2}?",
            "Where did {name} go for the {d2}?",
        ),
        "d": (
            "Lisbon",
            "Kyoto",
            "Montreal",
            "Krakow",
            "Seville",
            "Nairobi",
            "Oslo",
            "Hanoi",
            "Valparaiso",
            "Tbilisi",
        ),
        "d2": ("conference", "wedding", "job interview", "workshop", "family reunion"),
    },
    "painting": {
        "say": (
            "I finished a new painting yesterday, a {d} in watercolors.",
            "I've been painting again, this week it was a {d} from an old photo.",
        ),
        "reply": ("A {d}? I'd love to see it.", "You should frame that {d}, it sounds lovely."),
        "ask": ("What did {name} paint recently?", "What was the subject of {name}'s painting?"),
        "d": (
            "lighthouse at dusk",
            "field of sunflowers",
            "sunrise over the lake",
            "portrait of my grandmother",
            "harbor with fishing boats",
            "snowy mountain cabin",
        ),
        "d2": ("",),
    },
    "book": {
        "say": (
            "I'm reading \"{d}\" right now and I can't put it down.",
            'Just finished "{d}", the ending really got me.',
        ),
        "reply": (
            'I\'ve heard good things about "{d}".',
            'Is "{d}" worth reading? I need something new.',
        ),
        "ask": ("What book was {name} reading?", "Which novel did {name} recommend?"),
        "d": (
            "The Night Circus",
            "Station Eleven",
            "Pachinko",
            "The Overstory",
            "Circe",
            "Klara and the Sun",
            "A Gentleman in Moscow",
            "The Vanishing Half",
        ),
        "d2": ("",),
    },
    "workshop": {
        "say": (
            "I signed up for a {d} class at the community center, the first session was fun.",
            "Went to a {d} workshop on Saturday, I'm terrible at it but loved it.",
        ),
        "reply": (
            "A {d} class, how brave! Will you keep going?",
            "I tried {d} once, it's harder than it looks.",
        ),
        "ask": ("What kind of class did {name} sign up for?", "Which workshop did {name} attend?"),
        "d": (
            "pottery",
            "salsa dancing",
            "woodworking",
            "sourdough baking",
            "improv comedy",
            "calligraphy",
            "rock climbing",
            "beekeeping",
        ),
        "d2": ("",),
    },
    "job": {
        "say": (
            "I accepted the offer, I'm starting as a {d} at {d2} next month.",
            "First week as a {d} at {d2} done, my new team is great.",
        ),
        "reply": ("Congratulations on the {d} job!", "{d2} is lucky to have you."),
        "ask": ("What new job did {name} start?", "Which company did {name} join?"),
        "d": (
            "nurse",
            "data analyst",
            "high school teacher",
            "sous chef",
            "architect",
            "paramedic",
            "librarian",
        ),
        "d2": (
            "Riverside Hospital",
            "Brightwave",
            "Lincoln High",
            "Harbor Bistro",
            "Northgate Studio",
            "the city library",
        ),
    },
    "race": {
        "say": (
            "I ran the {d} on Sunday and finished in {d2}!",
            "Survived the {d}, my time was {d2}, my legs are dead.",
        ),
        "reply": ("{d2} in the {d} is impressive!", "Wow, the {d}! How do you feel?"),
        "ask": ("What race did {name} run?", "What was {name}'s time in the race?"),
        "d": (
            "Chicago marathon",
            "charity 10k",
            "trail half marathon",
            "Harbor Bridge run",
            "midnight 5k",
        ),
        "d2": ("under four hours", "52 minutes", "two hours flat", "27 minutes"),
    },
    "group": {
        "say": (
            "I went to a {d} meeting last night, everyone was so welcoming.",
            "Joined a {d} a few weeks ago and it has helped me a lot.",
        ),
        "reply": (
            "I'm glad the {d} feels welcoming.",
            "That {d} sounds like a good place for you.",
        ),
        "ask": ("What group did {name} join?", "Which meeting did {name} go to?"),
        "d": (
            "grief support group",
            "book club",
            "chess club",
            "volunteer fire brigade",
            "birdwatching society",
            "community garden",
        ),
        "d2": ("",),
    },
}

SMALL_TALK = (
    "How was your week?",
    "Work has been really busy lately, lots of meetings.",
    "The weather was great this weekend, we spent the whole day outside.",
    "I made pasta for dinner and the kids loved it.",
    "I'm so tired today, I barely slept last night.",
    "Do you have any plans for the weekend?",
    "We watched a movie at home and ordered pizza.",
    "My sister called me yesterday, we talked for hours.",
    "I've been trying to go to the gym more often.",
    "The traffic this morning was terrible.",
    "I finally cleaned the garage, it took all afternoon.",
    "It's been raining all week here.",
    "I had coffee with an old friend from school.",
    "My boss asked me to lead a new project.",
    "We went to the park with the dog this morning.",
    "I'm thinking about taking some time off soon.",
    "The new cafe near my place has great pastries.",
    "I spent the evening reading on the couch.",
    "Our neighbors had a loud party on Friday.",
    "I'm trying to eat healthier this month.",
    "My phone broke so I had to buy a new one.",
    "We visited my parents on Sunday.",
    "I started a new series on TV, it's pretty good.",
    "Honestly I just needed a quiet day at home.",
)
REACTIONS = (
    "That sounds nice!",
    "Haha, I know the feeling.",
    "Oh no, I hope it gets better.",
    "Same here, it has been a long week.",
    "That's great to hear.",
    "I should do that too.",
    "Tell me more about it next time!",
    "Wow, good for you.",
)
# Words that a question may use for a detail instead of the turn's own.
QUESTION_WORD = {"puppy": "dog", "kitten": "cat", "rabbit": "bunny", "parrot": "bird"}


@dataclass
class Turn:
    tid: int
    speaker: str
    text: str  # "Name: what they said"
    reply: str  # "Friend: the reply"
    kind: str = ""  # the event it states, if any


@dataclass
class Question:
    qid: int
    scope: int
    message: str
    relevant: frozenset[int]
    kind: str


@dataclass
class Pair:
    sid: int
    names: tuple[str, str]
    turns: list[Turn]


@dataclass
class PeopleSet:
    pairs: list[Pair]
    questions: list[Question]
    other: dict[int, int]  # answerable question -> the other pair it is also asked against


def _fill(template: str, **slots: str) -> str:
    return template.format(**slots)


def generate(seed: int = SEED, n_pairs: int = N_PAIRS) -> PeopleSet:
    rng = random.Random(seed)
    names = list(NAMES)
    rng.shuffle(names)
    pairs: list[Pair] = []
    questions: list[Question] = []
    had: dict[int, dict[str, set[str]]] = {}
    for sid in range(n_pairs):
        a, b = names[2 * sid], names[2 * sid + 1]
        turns: list[Turn] = []
        kinds_had: dict[str, set[str]] = {a: set(), b: set()}
        for _session in range(rng.randint(*SESSIONS)):
            n_turns = rng.randint(*TURNS_PER_SESSION)
            event_at = set(rng.sample(range(n_turns), rng.randint(*EVENTS_PER_SESSION)))
            for position in range(n_turns):
                speaker, friend = (a, b) if position % 2 == 0 else (b, a)
                tid = 1000 * sid + len(turns)
                if position not in event_at:
                    turns.append(
                        Turn(
                            tid,
                            speaker,
                            f"{speaker}: {rng.choice(SMALL_TALK)}",
                            f"{friend}: {rng.choice(REACTIONS)}",
                        )
                    )
                    continue
                kind = rng.choice(sorted(set(EVENTS) - kinds_had[speaker]) or sorted(EVENTS))
                kinds_had[speaker].add(kind)
                event = EVENTS[kind]
                d, d2 = rng.choice(event["d"]), rng.choice(event["d2"])
                slots = {"d": d, "d2": d2}
                said = _fill(rng.choice(event["say"]), **slots)
                reply = _fill(rng.choice(event["reply"]), **slots)
                turns.append(Turn(tid, speaker, f"{speaker}: {said}", f"{friend}: {reply}", kind))
                ask = rng.choice(event["ask"])
                message = _fill(ask, name=speaker, d2=d2, d2q=QUESTION_WORD.get(d2, d2))
                questions.append(Question(len(questions), sid, message, frozenset({tid}), kind))
        had[sid] = kinds_had
        pairs.append(Pair(sid, (a, b), turns))
    # A person with two events of a kind: a question about that kind has both turns.
    same_kind: dict[tuple[int, str, str], set[int]] = {}
    for pair in pairs:
        for turn in pair.turns:
            if turn.kind:
                same_kind.setdefault((pair.sid, turn.speaker, turn.kind), set()).add(turn.tid)
    speaker_of = {t.tid: t.speaker for pair in pairs for t in pair.turns}
    for q in questions:
        (tid,) = q.relevant
        q.relevant = frozenset(same_kind[q.scope, speaker_of[tid], q.kind])
    # Questions with no relevant turn: an event kind the person never had.
    for pair in pairs:
        for speaker in pair.names:
            missing = sorted(set(EVENTS) - had[pair.sid][speaker])
            for kind in missing[:2]:
                event = EVENTS[kind]
                d2 = rng.choice(event["d2"])
                message = _fill(
                    rng.choice(event["ask"]), name=speaker, d2=d2, d2q=QUESTION_WORD.get(d2, d2)
                )
                questions.append(Question(len(questions), pair.sid, message, frozenset(), "none"))
    other = {
        q.qid: (q.scope + 1 + rng.randrange(n_pairs - 1)) % n_pairs for q in questions if q.relevant
    }
    return PeopleSet(pairs, questions, other)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=int, help="print one conversation and its questions")
    args = parser.parse_args()
    data = generate()
    turns = sum(len(p.turns) for p in data.pairs)
    print(f"{len(data.pairs)} pairs, {turns} turns, {len(data.questions)} questions")
    if args.dump is not None:
        pair = data.pairs[args.dump]
        for turn in pair.turns:
            print(f"[{turn.tid}] {turn.text}  -> {turn.reply}")
        for q in data.questions:
            if q.scope == pair.sid:
                print(f"Q{q.qid} ({q.kind}) {q.message}  relevant={sorted(q.relevant)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
