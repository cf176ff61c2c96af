"""Two workloads for the same models, prose and code: a speedup measured on one need not transfer to another.

Every prompt here is cut from text that no training stage read: the prose prompts open
passages of the held-out novel documents, the code prompts open functions of held-out
standard-library files (`specviz.training.corpus`), so a speedup measured on them is what
transfers to unseen text of that kind, not what the models memorised. Among such openings these
are ones a class can read: the target's greedy continuations of the prose do not loop, and those
of the code parse as Python (tests/unit/training/test_shipped_models.py).

`compare` measures both workloads with one drafter and one k, the same way lesson 7 measures
one prompt (`specviz.lessons.cost.measure`), and `explain` reads the comparison with its spread:
which workload's speedup is higher, if that is a finding at all, and which of the checklist's
questions moved between them (a longer surviving prefix, cheaper proposals, less verification)
or whether it was the denominator, plain decoding's own step.

What it leaves out: math and chat workloads; more than two prompts a workload in the lesson
(the bench runs all of them).
"""
from specviz.lessons.cost import measure
from specviz.lessons.protocol import Spread, beats, ratio_spread, spread, within_noise

WORKLOADS = {
    "prose": [
        "In the evening, when they were all three together, Marianne began voluntarily to speak of",
        "There was merit in every drawing--in the least finished, perhaps the most; her style",
        "His good sense and good principles would delight you.--As far as the man is concerned, you could",
        "The last office of the four carriage-horses was to draw Sir Walter, Miss Elliot, and",
        "Her spring of felicity was in the glow of her spirits, as her friend Anne's was in the",
        "He would have had a wife of whose temper he could make no complaint, but he",
        "Mrs Clay's affections had overpowered her interest, and she had sacrificed, for the young",
    ],
    # each cut at the end of a line, so the continuation starts a line as the file's author did
    "code": [
        'def create_empty_file(filename):\n    """Create an empty file. If the file already exists, truncate it."""\n'
        '    fd = os.open(filename, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n',
        'def open_dir_fd(path):\n    """Open a file descriptor to a directory."""\n    assert os.path.isdir(path)\n'
        '    flags = os.O_RDONLY\n',
        'def fs_is_case_insensitive(directory):\n    """Detects if the file system for the specified directory\n'
        '    is case-insensitive."""\n    import tempfile\n',
        'def skip_unless_symlink(test):\n    """Skip decorator for tests that require functional symlink"""\n'
        '    ok = can_symlink()\n',
        'def skip_unless_working_chmod(test):\n    """Skip tests that require working os.chmod()\n\n'
        '    WASI SDK 15.0 cannot change file mode bits.\n    """\n    ok = can_chmod()\n',
        'def fd_count():\n    """Count the number of open file descriptors.\n    """\n',
        'def temp_cwd(name=\'tempcwd\', quiet=False):\n    """\n'
        '    Context manager that temporarily creates and changes the CWD.\n\n'
        '    The function temporarily changes the current working directory\n'
        '    after creating a temporary directory in the current directory with\n'
        '    name *name*.  If *name* is None, the temporary directory is\n'
        '    created using tempfile.mkdtemp.\n\n'
        '    If *quiet* is False (default) and it is not possible to\n'
        '    create or change the CWD, an error is raised.  If *quiet* is True,\n'
        '    only a warning is raised and the original CWD is used.\n\n    """\n',
    ],
}
LESSON_PROMPTS = 2      # prompts a workload in lesson 8: enough to average two openings, short enough for a class


def compare(models, settings, repeats: int = 3, prompts: int = LESSON_PROMPTS, progress=None) -> dict:
    """Plain and speculative decoding (`settings`) on the first `prompts` prompts of each workload:
    {workload: {"speedup": Spread as a dict, "spreads"}}. Runs of the prompts are paired run by run, as
    `measure` pairs them.

    "spreads" holds, as Spread dicts over every run of every prompt, what a speedup is made of
    (plain ms per token × tokens per target forward / ms a round): "per_forward", "draft_ms" and
    "verify_ms" a round, "plain_ms" a token. Greedy repeats of one prompt commit the same tokens,
    so the spread of "per_forward" is the spread between prompts.
    """
    out = {}
    for name, texts in WORKLOADS.items():
        runs = [measure(models, p, settings, repeats, progress) for p in texts[:prompts]]
        plain = [t for r in runs for t in r["plain"]["runs_ms_per_token"]]
        spec = [t for r in runs for t in r["speculative"]["runs_ms_per_token"]]
        each = [c for r in runs for c in r["speculative"]["runs_costs"]]
        out[name] = {"speedup": ratio_spread(plain, spec).as_dict(),
                     "spreads": {"per_forward": spread([c["tokens"] / c["rounds"] for c in each]).as_dict(),
                                 "draft_ms": spread([c["draft_ms"] / c["rounds"] for c in each]).as_dict(),
                                 "verify_ms": spread([c["verify_ms"] / c["rounds"] for c in each]).as_dict(),
                                 "plain_ms": spread(plain).as_dict()}}
    return out


def _spread(d: dict) -> Spread:
    return Spread(d["median"], d["low"], d["high"], d["runs"])


# What a speedup is made of, each in the words of the checklist's question it answers, and which
# way it helps a workload's speedup: more tokens per target forward helps, a costlier round hurts,
# and a slower plain step raises the speedup without speculation doing anything.
PARTS = [("per_forward", "a longer surviving prefix, so fewer target rounds", "tokens per target forward", "{:.2f}", +1),
         ("draft_ms", "cheaper proposals", "ms drafting a round", "{:.1f}", -1),
         ("verify_ms", "less verification", "ms verifying a round", "{:.1f}", -1),
         ("plain_ms", "the denominator, a slower plain step", "ms a token of plain decoding", "{:.1f}", +1)]


def explain(result: dict) -> str:
    """What lesson 8 says of a `compare` result: whether code's speedup is above prose's beyond
    the spread of the runs, and which parts of the speedup moved between the workloads, each named
    by the checklist question it answers and given to the workload it favours. A part whose ranges
    overlap is listed as within the spread, never as a cause.

    >>> def w(speedup, per_forward, draft, verify, plain):
    ...     d = lambda m, h: {"median": m, "low": m - h, "high": m + h, "runs": 6}
    ...     return {"speedup": d(speedup, 0.1), "spreads": {"per_forward": d(per_forward, 0.1),
    ...             "draft_ms": d(draft, 1), "verify_ms": d(verify, 1), "plain_ms": d(plain, 1)}}
    >>> print(explain({"code": w(1.9, 3.4, 3.0, 10.0, 8.0), "prose": w(1.4, 2.6, 3.5, 10.2, 8.2)}))
    ... # doctest: +NORMALIZE_WHITESPACE
    Code's speedup is above prose's (1.90× against 1.40×). In code's favour: a longer surviving prefix,
    so fewer target rounds (3.40 tokens per target forward on code against 2.60 on prose). Within the spread of the runs, so not a
    cause: ms drafting a round, ms verifying a round and ms a token of plain decoding.
    >>> print(explain({"code": w(1.3, 2.6, 4.7, 10.0, 8.0), "prose": w(1.4, 2.5, 15.8, 10.2, 8.2)}))
    ... # doctest: +NORMALIZE_WHITESPACE
    Code's speedup is within this machine's noise of prose's (1.30× against 1.40×), so this comparison does
    not say which workload speculation helps more. In code's favour: cheaper proposals (4.7 ms drafting a
    round on code against 15.8 on prose). Within the spread of the runs, so not a cause: tokens per target
    forward, ms verifying a round and ms a token of plain decoding.
    """
    code, prose = result["code"], result["prose"]
    order = beats(_spread(code["speedup"]), _spread(prose["speedup"]))
    said = [f"Code's speedup is {order}{' of' if order.startswith('within') else ''} prose's "
            f"({code['speedup']['median']:.2f}× against {prose['speedup']['median']:.2f}×)"
            + (", so this comparison does not say which workload speculation helps more." if order.startswith("within")
               else ".")]
    favours, noise = {"code": [], "prose": []}, []
    for key, question, unit, fmt, sign in PARTS:
        c, p = _spread(code["spreads"][key]), _spread(prose["spreads"][key])
        if within_noise(c, p):
            noise.append(unit)
            continue
        winner = "code" if (c.median - p.median) * sign > 0 else "prose"
        favours[winner].append(f"{question} ({fmt.format(c.median)} {unit} on code against "
                               f"{fmt.format(p.median)} on prose)")
    for name in ("code", "prose"):
        if favours[name]:
            said.append(f"In {name}'s favour: {'; '.join(favours[name])}.")
    if noise:
        listed = noise[0] if len(noise) == 1 else ", ".join(noise[:-1]) + " and " + noise[-1]
        said.append(f"Within the spread of the runs, so not a cause: {listed}.")
    return " ".join(said)
