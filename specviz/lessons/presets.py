"""The prompts every lesson's prompt box offers: prose first, then two code prompts.

Chosen for what a class should see happen: a common phrase the drafters follow, a famous opening,
a reply with two equally good continuations ("of course" / "no problem", lesson 3), a repetition
that lets DLoop's gate open (lesson 6), and two Python completions (the second workload). The
target's greedy continuation of each reads: no loop, and the code parses as Python
(tests/unit/training/test_shipped_models.py).

What it leaves out: the held-out prompts the bench and lesson 8 measure (specviz.lessons.workloads).
"""
PRESETS = [
    "The best way to learn is to",
    "It is a truth universally acknowledged, that",
    'Anne asked, "Could you open the window?" "Yes,',
    "She was very, very, very",
    "Mr. Darcy walked towards the window, and",
    # the second workload (specviz.lessons.workloads): a function to complete, a method body to finish
    'def mean(values):\n    """Return the average of the numbers in values."""\n    return sum(',
    'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n'
    '        """Add item to the top of the stack."""\n        self.',
]
