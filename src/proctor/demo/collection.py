"""The example collection that ships with Proctor: four queries, their passages, a three-question bank per
query, human judgments (0–3), hand-assigned example self-ratings (0–5) and three runs of clearly different
quality. All text is original, written for this demo.

Each passage is `(passage_id, text, judgment, ratings)`: `ratings[i]` is the example self-rating of the
passage for question `i` of its query.
"""

from __future__ import annotations

QUERIES: dict[str, str] = {
    "q1": "how do bees make honey",
    "q2": "why is the sky blue",
    "q3": "what causes ocean tides",
    "q4": "how does a refrigerator keep food cold",
}

QUESTIONS: dict[str, list[tuple[str, list[str]]]] = {
    "q1": [
        ("What do bees collect from flowers to make honey?", ["nectar"]),
        ("How do bees reduce the water content of nectar?", ["fanning their wings"]),
        ("Where do bees store honey in the hive?", ["wax cells of the honeycomb"]),
    ],
    "q2": [
        ("What kind of light scattering makes the sky blue?", ["Rayleigh scattering"]),
        ("Why is blue light scattered more than red light?", ["shorter wavelength"]),
        ("Why does the sky look red at sunset?", ["longer path through the atmosphere"]),
    ],
    "q3": [
        ("Which body's gravity mainly causes ocean tides?", ["the Moon"]),
        ("How many high tides do most coasts see each day?", ["two"]),
        ("What are spring tides?", ["tides when Sun and Moon align"]),
    ],
    "q4": [
        ("What substance carries heat out of a refrigerator?", ["refrigerant"]),
        ("What does the compressor do in a refrigerator?", ["compresses the refrigerant gas"]),
        ("Why are the coils at the back of a fridge warm?", ["they release the heat removed from inside"]),
    ],
}

PASSAGES: dict[str, list[tuple[str, str, int, list[int]]]] = {
    "q1": [
        ("d101", "Honey bees sip nectar from flowers and carry it home in a honey stomach. In the hive, worker "
                 "bees pass the nectar mouth to mouth, adding enzymes that split its sugars.", 3, [5, 1, 0]),
        ("d102", "Back in the hive, bees spread the nectar over the wax cells of the honeycomb and fan their "
                 "wings until most of the water evaporates; then they cap each cell with wax.", 3, [2, 5, 5]),
        ("d103", "Beekeepers harvest honey in late summer and leave enough stores for the colony to survive "
                 "the winter.", 1, [0, 0, 2]),
        ("d104", "Bumblebees are larger and hairier than honey bees and nest in small colonies in the ground.",
         0, [0, 0, 0]),
        ("d105", "Wasps are predators: they feed their larvae on insects and do not produce honey.", 0, [1, 0, 0]),
        ("d106", "Nectar is a sugary liquid made by flowers to attract pollinators such as bees and "
                 "butterflies.", 1, [4, 0, 0]),
    ],
    "q2": [
        ("d201", "Sunlight is scattered by the molecules of the air. This Rayleigh scattering is much stronger "
                 "for short wavelengths, so blue light is spread across the whole sky.", 3, [5, 5, 0]),
        ("d202", "At sunset the light crosses a far longer path through the atmosphere; most blue light is "
                 "scattered away before it reaches us, leaving reds and oranges.", 2, [2, 3, 5]),
        ("d203", "The ocean looks blue partly because it reflects the sky and partly because water absorbs "
                 "red light.", 1, [0, 1, 0]),
        ("d204", "A blue whale can weigh more than 150 tonnes, making it the largest animal known.", 0, [0, 0, 0]),
        ("d205", "Violet light is scattered even more than blue, but our eyes are less sensitive to it and "
                 "the sun emits less of it.", 2, [3, 4, 0]),
        ("d206", "Sky diving is usually done from a height of about four kilometres.", 0, [0, 0, 0]),
    ],
    "q3": [
        ("d301", "Tides are caused mainly by the Moon's gravity, which pulls the ocean into two bulges; as the "
                 "Earth turns, most coasts pass through both and see two high tides a day.", 3, [5, 5, 0]),
        ("d302", "When the Sun and the Moon line up at new and full moon their pulls add up and produce "
                 "spring tides, the highest high tides of the month.", 3, [3, 0, 5]),
        ("d303", "Tide tables list the predicted times and heights of high and low water for a harbour.",
         1, [0, 2, 0]),
        ("d304", "Ocean waves are raised by wind blowing over the water surface.", 0, [0, 0, 0]),
        ("d305", "The Moon orbits the Earth about once every 27 days and always shows us the same face.",
         0, [1, 0, 0]),
        ("d306", "Surfers check the tide because some reefs only break well at low water.", 0, [0, 0, 0]),
    ],
    "q4": [
        ("d401", "A refrigerator pumps heat out of its cabinet: a refrigerant evaporates in the coils inside, "
                 "absorbing heat from the food compartment.", 3, [5, 1, 1]),
        ("d402", "The compressor squeezes the refrigerant gas, raising its temperature, and the hot gas gives "
                 "off its heat through the coils at the back before it condenses.", 3, [4, 5, 5]),
        ("d403", "Keep the fridge below 5 °C and do not overfill it so that cold air can circulate.", 1,
         [0, 0, 0]),
        ("d404", "Ice houses stored winter ice in straw so that food could be kept cool in summer.", 0,
         [0, 0, 0]),
        ("d405", "Freezers work on the same principle as refrigerators but keep their cabinet below -18 °C.",
         2, [1, 1, 0]),
        ("d406", "Kitchen design trends favour integrated appliances hidden behind cabinet doors.", 0, [0, 0, 0]),
    ],
}

MODEL = "example-grades (hand-assigned for the demo)"
PROMPT_CLASS = "QuestionSelfRatedUnanswerablePromptWithChoices"

# Each run ranks six passages per query. `strong` puts relevant passages first, `middling` mixes them,
# `weak` prefers off-topic passages; `partial` only answers two of the four queries.
RUNS: dict[str, dict[str, list[str]]] = {
    "strong": {"q1": ["d102", "d101", "d106", "d103", "d105", "d104"],
               "q2": ["d201", "d202", "d205", "d203", "d204", "d206"],
               "q3": ["d301", "d302", "d303", "d305", "d304", "d306"],
               "q4": ["d402", "d401", "d405", "d403", "d404", "d406"]},
    "middling": {"q1": ["d106", "d103", "d101", "d104", "d102", "d105"],
                 "q2": ["d203", "d201", "d204", "d205", "d206", "d202"],
                 "q3": ["d305", "d301", "d304", "d303", "d306", "d302"],
                 "q4": ["d405", "d403", "d401", "d406", "d404", "d402"]},
    "weak": {"q1": ["d104", "d105", "d103", "d106", "d101", "d102"],
             "q2": ["d204", "d206", "d203", "d205", "d202", "d201"],
             "q3": ["d304", "d306", "d305", "d303", "d302", "d301"],
             "q4": ["d404", "d406", "d403", "d405", "d402", "d401"]},
    "partial": {"q1": ["d101", "d102", "d106", "d103", "d104", "d105"],
                "q3": ["d302", "d301", "d303", "d304", "d305", "d306"]},
}
