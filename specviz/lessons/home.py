"""Plain decoding against speculative decoding on the same prompt, run as a race, then replayed.

Both generations run in this one process, one round at a time. The next round always goes to
the runner whose measured decode time is behind, so the two texts grow as they would if the
two ran side by side, each at its own measured speed. Each round's time is measured inside
the engine (draft start to commit end).

The race is run to the end with nothing drawn, and only then replayed (`frames`): redrawing the
lanes after every round put the browser's work on the same cores as the rounds being timed, and
plain decoding, with two to three times as many rounds, paid for more of it (on a 2-core host
41.5 ms/token against a quiet 6). The replay runs each lane at its measured pace, stretched or squeezed to a fixed length.

One race is one draw from a noisy machine, so `run` races several times (the protocol of
specviz.lessons.protocol: the sides alternate inside each race, the speedup is given as the
median and range over races) and replays the median race. `fastest_setting` measures every drafter
and block size on this server, `opening_choice` picks the one the page opens with from it (once per
server, when the models load: appkit.opening), `verdict` says, with the
race's own numbers, why speculation won or lost: tokens committed per round against what a round
costs in one-token steps, and `explain` puts that in the page's words, within the noise or not.

What it leaves out: prefill (time to first token); both runners pay it before the start line.
"""
import contextlib
from dataclasses import dataclass, field

from specviz.generator.engine import Generation
from specviz.generator.drafters.names import DRAFTER_LABELS
from specviz.generator.settings import Settings
from specviz.generator.threads import fit_threads
from specviz.lessons import protocol
from specviz.lessons.cost import trace_costs
from specviz.lessons.markup import md_token


@dataclass
class Runner:
    name: str
    generation: Generation
    elapsed_ms: float = 0.0
    texts: list = field(default_factory=list)     # (text, kind) per committed token
    marks: list = field(default_factory=list)     # (measured ms, tokens) after each round

    @property
    def ms_per_token(self) -> float | None:
        return self.elapsed_ms / len(self.texts) if self.texts else None

    @property
    def done(self) -> bool:
        return self.generation.done


def start(models, prompt: str, speculative: Settings) -> list[Runner]:
    """Two runners: plain decoding (same verifier and sampling, no drafter) and `speculative`."""
    return [Runner("plain decoding", Generation(models, prompt, speculative.plain())),
            Runner(f"speculative ({DRAFTER_LABELS.get(speculative.drafter, speculative.drafter)}, "
                   f"k={speculative.k})",
                   Generation(models, prompt, speculative))]


def step(runners: list[Runner]) -> Runner | None:
    """Advance the runner that is behind in measured time; None when both have finished."""
    live = [r for r in runners if not r.done]
    if not live:
        return None
    r = min(live, key=lambda x: x.elapsed_ms)
    rnd = r.generation.step()
    if rnd is None:
        return r
    r.elapsed_ms += rnd.total_ms
    r.texts += [(e["text"], e["kind"]) for e in rnd.emitted]
    r.marks.append((r.elapsed_ms, len(r.texts)))
    return r


def finish(runners: list[Runner]) -> list[Runner]:
    """Run the race to the end; nothing is drawn meanwhile, so nothing but the rounds is timed."""
    while step(runners) is not None:
        pass
    return runners


def frames(runners: list[Runner], seconds: float) -> list[tuple[float, int, int, float]]:
    """The finished race replayed so that the last round ends after `seconds`, each lane at its
    measured pace: (seconds from the start, runner index, tokens shown, ms per token so far).

    >>> plain = Runner("plain", None, marks=[(10.0, 1), (20.0, 2)])
    >>> fast = Runner("speculative", None, marks=[(12.0, 3)])
    >>> frames([plain, fast], seconds=2.0)
    [(1.0, 0, 1, 10.0), (1.2, 1, 3, 4.0), (2.0, 0, 2, 10.0)]
    """
    end = max(ms for r in runners for ms, _ in r.marks)
    return sorted((ms / end * seconds, i, n, ms / n) for i, r in enumerate(runners) for ms, n in r.marks)


def replay_sentence(plain_ms: float, spec_ms: float, seconds: float) -> str:
    """How the replay (frames) relates to the race it shows: the slower lane's decode time is stretched or
    squeezed to `seconds`, so the replay is slow motion only where the race took less. A loaded machine can
    take longer than `seconds`, and a fixed "slow motion" would then be false.

    >>> replay_sentence(1200.0, 800.0, 3.0)
    'Shown in slow motion (2.5× slower than the race): the race ran first with nothing drawn (1200 ms against 800 ms of decoding), then replayed over 3 seconds with each lane at its measured pace.'
    >>> replay_sentence(6000.0, 4000.0, 3.0).split(":")[0]
    'Shown sped up (2× faster than the race)'
    """
    factor = seconds * 1000 / max(plain_ms, spec_ms)
    how = (f"in slow motion ({factor:.2g}× slower than the race)" if factor >= 1.05 else
           f"sped up ({1 / factor:.2g}× faster than the race)" if factor <= 1 / 1.05 else "at about the race's own pace")
    return (f"Shown {how}: the race ran first with nothing drawn ({plain_ms:.0f} ms against {spec_ms:.0f} ms of "
            f"decoding), then replayed over {seconds:g} seconds with each lane at its measured pace.")


def run_now(models, prompt: str, speculative: Settings, races: int = 5, progress=None) -> tuple[dict, dict]:
    """`run` on the cores free now: torch's thread count fitted first (specviz.generator.threads), as a
    class's laptop may be busy. Returns (run's result, the fit)."""
    fit = fit_threads(models)
    return run(models, prompt, speculative, races, progress), fit


def fastest_now(models, prompt: str, drafters: list[str], progress=None) -> dict:
    """`fastest_setting` on the cores free now (see `run_now`)."""
    fit_threads(models)
    return fastest_setting(models, prompt, drafters, progress=progress)


def run(models, prompt: str, speculative: Settings, races: int = 5, progress=None) -> dict:
    """`races` races of the same prompt; {"races": [[plain, speculative], ...], "speedup": Spread,
    "median": index of the race whose speedup is the median}. `progress(done, total)` after each."""
    done = []
    for i in range(races):
        done.append(finish(start(models, prompt, speculative)))
        if progress:
            progress(i + 1, races)
    speedups = [plain.ms_per_token / spec.ms_per_token for plain, spec in done]
    order = sorted(range(races), key=speedups.__getitem__)
    return {"races": done, "speedup": protocol.spread(speedups), "median": order[(races - 1) // 2]}


def verdict(plain: Runner, spec: Runner) -> dict:
    """Why the speculative runner won or lost: what a round commits against what it costs.

    A round wins when it commits more tokens than the one-token steps its time would buy plain
    decoding: tokens_per_round > round_in_steps.

    >>> plain = Runner("plain", None, elapsed_ms=100.0, texts=[("a", "bonus")] * 10)
    >>> spec = Runner("spec", None, elapsed_ms=60.0, texts=[("a", "accepted")] * 10, marks=[(30.0, 5), (60.0, 10)])
    >>> verdict(plain, spec)
    {'tokens_per_round': 5.0, 'round_in_steps': 3.0, 'wins': True}
    """
    rounds = len(spec.marks)
    tokens_per_round = len(spec.texts) / rounds
    round_in_steps = spec.elapsed_ms / rounds / plain.ms_per_token
    return {"tokens_per_round": tokens_per_round, "round_in_steps": round_in_steps,
            "wins": tokens_per_round > round_in_steps}


def explain(speed, why: dict) -> tuple[str, str]:
    """The race's result in words, from its speedup over races (a protocol.Spread) and the median
    race's `verdict`: ("won", …) when every race was faster than plain decoding, ("lost", …) when every
    one was slower, else ("noise", …), whose sentence says where the races fell: on both sides of 1×, or
    level with it at one end (a race at exactly 1× is neither a win nor a loss).

    The round's two numbers are compared as shown (two decimals), and "so it wins" is said only where
    they support it: the tone comes from all the races, the round's numbers from the median one.

    >>> from specviz.lessons.protocol import Spread
    >>> why = {"tokens_per_round": 2.5, "round_in_steps": 1.9, "wins": True}
    >>> explain(Spread(1.3, 1.2, 1.4, 5), why)
    ('won', 'A speculative round committed **2.50 tokens** and cost as much time as **1.90 one-token steps** of plain decoding: more tokens than steps, so it wins.')
    >>> explain(Spread(1.1, 0.9, 1.4, 5), why)[0], explain(Spread(0.8, 0.7, 0.9, 5), why)[0]
    ('noise', 'lost')
    >>> explain(Spread(0.9, 0.85, 1.0, 5), why)[1].split(": ")[1]
    'none of the 5 races was faster than plain decoding, and the fastest ran level with it (1×). A speculative round committed **2.50 tokens** and cost as much time as **1.90 one-token steps** of plain decoding'
    """
    a, b = round(why["tokens_per_round"], 2), round(why["round_in_steps"], 2)
    than = "more tokens than steps" if a > b else "fewer tokens than steps" if a < b else "as many tokens as steps"
    rounds = (f"A speculative round committed **{a:.2f} tokens** and cost as much time as "
              f"**{b:.2f} one-token steps** of plain decoding: {than}")
    races = "the one race" if speed.n == 1 else f"the {speed.n} races"
    every = "the one race was" if speed.n == 1 else f"all {speed.n} races were"
    side = protocol.versus_plain(speed)
    if side == "faster":
        if a > b:
            return "won", f"{rounds}, so it wins."
        # the median race's round and the spread disagree: say both, conclude nothing from the round
        return "won", f"Speculation won on this machine now: {every} faster. {rounds}."
    if side == "slower":
        if a > b:   # as above, the other way round
            return "lost", (f"Speculation lost on this machine now: {every} slower. {rounds}; lesson 7 takes a "
                            "round's time apart, and **Find the fastest setting on this machine** measures others.")
        return "lost", (f"Speculation lost on this machine now. {rounds}, and a round pays off only when it commits "
                        "more tokens than the steps it costs. That is lesson 7's arithmetic, and this drafter and k did "
                        "not meet it here; press **Find the fastest setting on this machine**.")
    if speed.low < 1 < speed.high:
        where = f"{races} fell on both sides of 1×"
    elif speed.low == speed.high:    # == 1: every race exactly level
        where = f"{'the one race' if speed.n == 1 else f'all {speed.n} races'} ran level with plain decoding (1×)"
    elif speed.high == 1:
        where = f"none of {races} was faster than plain decoding, and the fastest ran level with it (1×)"
    else:
        where = f"none of {races} was slower than plain decoding, and the slowest ran level with it (1×)"
    return "noise", (f"Faster or slower here is **within this machine's noise**: {where}. {rounds}. Lesson 7 takes a "
                     "round's time apart.")


def first_difference(plain: list[str], spec: list[str]) -> int | None:
    """Where two token texts part: the 0-based index of the first token that differs (or where the
    shorter one ends), None when they are the same token for token.

    >>> first_difference(["a", "b"], ["a", "b"]), first_difference(["a", "b", "c"], ["a", "x", "c"])
    (None, 1)
    >>> first_difference(["a"], ["a", "b"])
    1
    """
    at = next((i for i, (p, s) in enumerate(zip(plain, spec)) if p != s), min(len(plain), len(spec)))
    return None if at == len(plain) == len(spec) else at


def same_text(plain: list[str], spec: list[str]) -> str:
    """The race's "Same text" line, from the two runners' token texts.

    >>> same_text(["The", " cat"], ["The", " cat"])
    '**Same text:** yes, token for token.'
    >>> same_text(["The", " cat", " sat"], ["The", " dog", " sat"])
    "**Same text:** no. The texts part at token 2: plain decoding chose '␣cat', speculative decoding '␣dog'."
    """
    at = first_difference(plain, spec)
    if at is None:
        return "**Same text:** yes, token for token."
    chose = lambda texts: md_token(texts[at] if at < len(texts) else None)
    return (f"**Same text:** no. The texts part at token {at + 1}: plain decoding chose {chose(plain)}, speculative "
            f"decoding {chose(spec)}.")


def same_answer(plain: list[str], spec: list[str]) -> str:
    """The answer to the home page's question (will the two texts be the same?) once a race has run:
    the theory says the same, within implementation numerics; where this race's texts part, the answer
    says so, so that it never sits above a "Same text: no" as a plain "the same".

    >>> same_answer(["a", "b"], ["a", "b"])
    '**Answer: the same**, and this race shows it: token for token.'
    >>> same_answer(["a", "b"], ["a", "c"])
    '**Answer: the same in exact arithmetic, but not in this race**: its texts part at token 2, where the numerics flipped a greedy token.'
    """
    at = first_difference(plain, spec)
    if at is None:
        return "**Answer: the same**, and this race shows it: token for token."
    return (f"**Answer: the same in exact arithmetic, but not in this race**: its texts part at token {at + 1}, "
            "where the numerics flipped a greedy token.")


OPENING_KS = (2, 3, 4)   # what the opening measurement tries for every drafter


def opening_choice(best: dict, markov: list[str]) -> tuple[str, int]:
    """The setting the home race opens on, from a `fastest_setting` measurement made when the server's
    models loaded: a drafter with a Markov head (DSpark's kind, the one the lessons build up to) at its
    fastest k when its speedup is within this machine's noise of the best setting's, else the best.

    >>> from specviz.lessons.protocol import Spread
    >>> best = {"drafter": "ar", "k": 2, "speedup": Spread(1.30, 1.25, 1.35, 3),
    ...         "tried": {"ar k=2": Spread(1.30, 1.25, 1.35, 3), "dspark k=4": Spread(1.22, 1.18, 1.26, 3),
    ...                   "dspark k=2": Spread(1.10, 1.05, 1.15, 3)}}
    >>> opening_choice(best, ["dspark"])
    ('dspark', 4)
    >>> opening_choice(dict(best, tried=dict(best["tried"], **{"dspark k=4": Spread(1.1, 1.0, 1.2, 3)})), ["dspark"])
    ('ar', 2)
    """
    mine = [(name, s) for name, s in best["tried"].items() if name.rsplit(" k=", 1)[0] in markov]
    if mine:
        name, speed = max(mine, key=lambda item: item[1].median)
        if protocol.beats(best["speedup"], speed) != "above":
            drafter, k = name.rsplit(" k=", 1)
            return drafter, int(k)
    return best["drafter"], best["k"]


def opening_sentence(best: dict, choice: tuple[str, int], label=str) -> str:
    """What the home page says before its race about the setting it opens on: where it came from, why this one,
    and, when the measurement found no setting faster than plain decoding, that plainly.

    >>> from specviz.lessons.protocol import Spread
    >>> best = {"drafter": "ar", "k": 2, "speedup": Spread(1.30, 1.25, 1.35, 3), "tokens": 24,
    ...         "tried": {"ar k=2": Spread(1.30, 1.25, 1.35, 3), "dspark k=4": Spread(1.22, 1.18, 1.26, 3)}}
    >>> print(opening_sentence(best, ("dspark", 4)))  # doctest: +NORMALIZE_WHITESPACE
    The race opens on **dspark at k = 4**: measured on this server when its models loaded, 1.22× (1.18–1.26×
    over 3 runs) against plain decoding over 24 tokens, within this machine's noise of the fastest of the 2
    settings tried (ar at k = 2, 1.30× (1.25–1.35× over 3 runs)).
    >>> slow = dict(best, speedup=Spread(0.9, 0.85, 0.95, 3), tried={"ar k=2": Spread(0.9, 0.85, 0.95, 3)})
    >>> print(opening_sentence(slow, ("ar", 2)))  # doctest: +NORMALIZE_WHITESPACE
    The race opens on **ar at k = 2**: measured on this server when its models loaded, the fastest of the 1
    setting tried at 0.90× (0.85–0.95× over 3 runs) against plain decoding over 24 tokens. **No setting was
    faster than plain decoding on this machine**: expect speculation to lose this race here; lesson 7 shows
    what a round costs on this machine.
    """
    name = f"{choice[0]} k={choice[1]}"
    speed = best["tried"][name]
    n = len(best["tried"])
    settings = f"{n} setting{'s' if n != 1 else ''} tried"
    said = f"The race opens on **{label(choice[0])} at k = {choice[1]}**: measured on this server when its models loaded, "
    if choice == (best["drafter"], best["k"]):
        said += (f"the fastest of the {settings} at {speed.label(unit='×')} against plain decoding over "
                 f"{best['tokens']} tokens.")
    else:
        said += (f"{speed.label(unit='×')} against plain decoding over {best['tokens']} tokens, within this "
                 f"machine's noise of the fastest of the {settings} ({label(best['drafter'])} at k = "
                 f"{best['k']}, {best['speedup'].label(unit='×')}).")
    side = protocol.versus_plain(best["speedup"])
    if side == "slower":
        said += (" **No setting was faster than plain decoding on this machine**: expect speculation to lose this "
                 "race here; lesson 7 shows what a round costs on this machine.")
    elif side != "faster":
        said += " Whether even the fastest setting beats plain decoding is within this machine's noise."
    return said


def fastest_setting(models, prompt: str, drafters: list[str], ks=(2, 4), tokens: int = 24,
                    repeats: int = 3, progress=None, guard=contextlib.nullcontext) -> dict:
    """Measure every drafter at every block size against plain decoding on this server, the sides
    alternated (specviz.lessons.protocol), and return the fastest:
    {"drafter", "k", "speedup": Spread, "tokens", "tried": {label: Spread}}.

    Short by default (three counted runs of 24 tokens after a warm-up, k = 2 and 4, ranked by
    their median): it chooses where the page opens, once per server, so one slow moment of a
    busy machine must not pick it; the race itself then measures with spread. Each run happens inside
    `guard()` (a server's engine lock), so a measurement in the background lets a student's click in
    between two runs instead of holding the models for all of them.
    """
    if not drafters:
        raise ValueError("this model set has no drafter to race")
    settings = {"plain": Settings.greedy(None, tokens)}
    settings.update({(d, k): Settings.greedy(d, tokens, k=k) for d in drafters for k in ks})
    def timed(s):
        with guard():
            return trace_costs(Generation(models, prompt, s).run())["ms_per_token"]

    runs = protocol.alternate({name: (lambda s=s: timed(s)) for name, s in settings.items()}, repeats,
                              progress=lambda done, total, _: progress(done, total) if progress else None)
    tried = {name: protocol.ratio_spread(runs["plain"], runs[name]) for name in settings if name != "plain"}
    (drafter, k) = max(tried, key=lambda name: tried[name].median)
    return {"drafter": drafter, "k": k, "speedup": tried[(drafter, k)], "tokens": tokens,
            "tried": {f"{d} k={k}": s for (d, k), s in tried.items()}}


def fastest_caption(best: dict, label=str) -> str:
    """What `fastest_setting` found, in words: the setting, how many were measured, its speedup with
    spread, and whether it was the fastest at all. `fastest_setting` ranks by the median alone, so the
    caption calls the setting "the fastest" only where its range lies above every other setting's
    (protocol.beats); where some ranges overlap it, the order is within this machine's noise, and the
    caption names the settings tied with it, highest median first.

    >>> from specviz.lessons.protocol import Spread
    >>> clear = {"drafter": "dspark", "k": 4, "tokens": 24, "speedup": Spread(1.4, 1.3, 1.5, 3),
    ...          "tried": {"dspark k=4": Spread(1.4, 1.3, 1.5, 3), "ar k=2": Spread(0.9, 0.8, 1.0, 3)}}
    >>> fastest_caption(clear)
    'Measured on this machine just now: dspark at k = 4 was the fastest of the 2 settings tried (1.40× (1.30–1.50× over 3 runs) against plain decoding over 24 tokens).'
    >>> tied = dict(clear, tried=dict(clear["tried"], **{"ar k=4": Spread(1.3, 1.1, 1.35, 3)}))
    >>> fastest_caption(tied, str.upper)
    "Measured on this machine just now: DSPARK at k = 4 had the highest median of the 3 settings tried (1.40× (1.30–1.50× over 3 runs) against plain decoding over 24 tokens), but its lead over AR at k = 4 (1.30× (1.10–1.35× over 3 runs)) is within this machine's noise: the race opens on it, and either could be the faster here."
    """
    mine = f"{best['drafter']} k={best['k']}"
    others = sorted(((name, s) for name, s in best["tried"].items() if name != mine),
                    key=lambda item: -item[1].median)
    tied = [(name, s) for name, s in others
            if protocol.beats(best["speedup"], s) != "above"]   # never "below": it has the highest median
    setting = f"{label(best['drafter'])} at k = {best['k']}"
    measured = (f"of the {len(best['tried'])} settings tried ({best['speedup'].label(unit='×')} against plain "
                f"decoding over {best['tokens']} tokens)")
    side = protocol.versus_plain(best["speedup"])
    loses = ("" if side == "faster" else " **Even the fastest setting was slower than plain decoding in every run "
             "here.**" if side == "slower" else " Some of its runs were no faster than plain decoding.")
    if not tied:
        return f"Measured on this machine just now: {setting} was the fastest {measured}.{loses}"
    names = [f"{label(name.rsplit(' k=', 1)[0])} at k = {name.rsplit(' k=', 1)[1]} ({s.label(unit='×')})"
             for name, s in tied]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (f"Measured on this machine just now: {setting} had the highest median {measured}, but its lead over "
            f"{listed} is within this machine's noise: the race opens on it, and "
            f"{'either could be the faster' if len(tied) == 1 else 'any of them could be the fastest'} here.{loses}")
