"""Two workloads for the same models: prose and code, as the papers report speedups per dataset.

Every prompt here is cut from text that no training stage read: the prose prompts open
passages of the held-out novel documents, the code prompts open functions of held-out
standard-library files (`specviz.training.corpus`), so a speedup measured on them is what
transfers to unseen text of that kind, not what the models memorised.

`compare` measures both workloads with one drafter and one k, the same way lesson 7 measures
one prompt (`specviz.lessons.cost.measure`), and `summary` says which of the checklist's
questions the workload moves: the drafter and the check are the same models on both, so a
round's cost transfers and the surviving prefix must be measured again.

What it leaves out: math and chat workloads; more than two prompts a workload in the lesson
(the bench runs all of them).
"""
from specviz.lessons.cost import measure
from specviz.lessons.protocol import Spread, beats, ratio_spread

WORKLOADS = {
    "prose": [
        "It would be well for the eldest sister if she were equally satisfied with her situation, for",
        "The house and grounds, and furniture, were approved, the Crofts were approved,",
        '"Your behaviour was certainly very wrong," said she; "because',
        "There was merit in every drawing--in the least finished, perhaps the most; her style was",
        "He stopped.--Emma dared not attempt any immediate reply. To speak, she was sure would",
        "In the evening, when they were all three together, Marianne began voluntarily to speak of him again;",
        '"All this she must possess," added Darcy, "and to all this she must yet add',
    ],
    "code": [
        'def create_empty_file(filename):\n    """Create an empty file. If the file already exists, truncate it."""\n    fd = ',
        'def open_dir_fd(path):\n    """Open a file descriptor to a directory."""\n    assert ',
        'def fs_is_case_insensitive(directory):\n    """Detects if the file system for the specified directory\n'
        '    is case-insensitive."""\n    import tempfile\n    with ',
        'def guess_type(url, strict=True):\n    """Guess the type of a file based on its URL.\n\n'
        '    Return value is a tuple (type, encoding) where type is None if the\n    type can',
        'def change_cwd(path, quiet=False):\n    """Return a context manager that changes the current working directory.\n\n'
        '    Arguments:\n\n      path: ',
        'def add_type(type, ext, strict=True):\n    """Add a mapping between a type and an extension.\n\n'
        '    When the extension is already known, the new\n    type will',
        '    def global_matches(self, text):\n        """Compute matches when text is a simple name.\n\n'
        '        Return a list of all keywords, built-in functions and names currently\n'
        '        defined in self.namespace that match.\n\n        """\n        matches = []\n',
    ],
}
LESSON_PROMPTS = 2      # prompts a workload in lesson 8: enough to average two openings, short enough for a class


def compare(models, settings, repeats: int = 3, prompts: int = LESSON_PROMPTS, progress=None) -> dict:
    """Plain and speculative decoding (`settings`) on the first `prompts` prompts of each workload:
    {workload: {"speedup": Spread as a dict, "per_forward", "draft_ms_per_round", "verify_ms_per_round",
    "plain_ms_per_token"}}. Runs of the prompts are paired run by run, as `measure` pairs them.
    """
    out = {}
    for name, texts in WORKLOADS.items():
        runs = [measure(models, p, settings, repeats, progress) for p in texts[:prompts]]
        plain = [t for r in runs for t in r["plain"]["runs_ms_per_token"]]
        spec = [t for r in runs for t in r["speculative"]["runs_ms_per_token"]]
        costs = [r["speculative"]["costs"] for r in runs]
        rounds = sum(c["rounds"] for c in costs)
        out[name] = {"speedup": ratio_spread(plain, spec).as_dict(),
                     "per_forward": sum(c["tokens"] for c in costs) / rounds,
                     "draft_ms_per_round": sum(c["draft_ms"] for c in costs) / rounds,
                     "verify_ms_per_round": sum(c["verify_ms"] for c in costs) / rounds,
                     "plain_ms_per_token": sorted(plain)[(len(plain) - 1) // 2]}
    return out


def summary(result: dict) -> str:
    """What lesson 8 says of a comparison, whichever way it came out.

    >>> r = {"code": {"speedup": {"median": 1.9, "low": 1.8, "high": 2.0, "runs": 6}, "per_forward": 3.4,
    ...               "draft_ms_per_round": 2.5, "verify_ms_per_round": 10.0},
    ...      "prose": {"speedup": {"median": 1.4, "low": 1.3, "high": 1.5, "runs": 6}, "per_forward": 2.6,
    ...               "draft_ms_per_round": 2.4, "verify_ms_per_round": 9.9}}
    >>> print(summary(r))  # doctest: +NORMALIZE_WHITESPACE
    Code's speedup is above prose's: 3.40 tokens per target forward on code against 2.60 on prose, with the
    same models, drafter and k, and a round of drafting and checking that took 12.5 ms on code and 12.3 ms on
    prose. Of the checklist's questions, the **surviving prefix** is the one the workload moves: it depends on
    how predictable the text is to this target, so it must be measured again on each workload.
    >>> r["code"]["speedup"]["low"] = 1.45
    >>> summary(r).split(":")[0]
    "Code's speedup is within this machine's noise of prose's"
    """
    code, prose = result["code"], result["prose"]
    order = beats(*(Spread(w["speedup"]["median"], w["speedup"]["low"], w["speedup"]["high"], w["speedup"]["runs"])
                    for w in (code, prose)))
    order += " of" if order.startswith("within") else ""
    round_ms = {name: w["draft_ms_per_round"] + w["verify_ms_per_round"] for name, w in (("code", code), ("prose", prose))}
    return (f"Code's speedup is {order} prose's: {code['per_forward']:.2f} tokens per target forward on code "
            f"against {prose['per_forward']:.2f} on prose, with the same models, drafter and k, and a round of "
            f"drafting and checking that took {round_ms['code']:.1f} ms on code and {round_ms['prose']:.1f} ms on "
            "prose. Of the checklist's questions, the **surviving prefix** is the one the workload moves: it "
            "depends on how predictable the text is to this target, so it must be measured again on each workload.")
