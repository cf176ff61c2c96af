"""The home race as its page runs it, five clicks quiet and five with one core kept busy.

Run from the repository root: `python -m scripts.race_check`. It measures the setting the page opens
with as a server does once its models load (home.fastest_setting, then home.opening_choice; appkit.opening),
then makes five "clicks"
per condition, each fitting the threads to the free cores and running five races of 40 greedy
tokens (home.run, the median race replayed). "Busy" starts `python -c "while True: pass"` before
its clicks and stops it after them, by its process id. Prints one line per click and a JSON
summary; the figures of docs/benchmarks.md came from it.
"""
import json
import subprocess
import sys

from specviz.generator.models import load_embedded
from specviz.generator.settings import Settings
from specviz.generator.threads import fit_threads
from specviz.lessons.presets import PRESETS
from specviz.lessons import home

m = load_embedded()
fit_threads(m)
best = home.fastest_setting(m, PRESETS[0], list(m.drafter_models), ks=home.OPENING_KS)
drafter, k = home.opening_choice(best, m.block_drafters(markov=True))
print("opening setting:", drafter, "k =", k, {name: s.label(unit="x") for name, s in best["tried"].items()}, flush=True)
settings = Settings.greedy(drafter, 40, k=k)
out = {"opening": [drafter, k], "measured": {name: s.as_dict() for name, s in best["tried"].items()}}
for condition in ("quiet", "one core busy"):
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if condition != "quiet" else None
    if busy:
        print("busy process", busy.pid, flush=True)
    clicks = []
    for _ in range(5):
        threads = fit_threads(m)["threads"]
        res = home.run(m, PRESETS[0], settings, 5)
        v = home.verdict(*res["races"][res["median"]])
        clicks.append({"speedup": res["speedup"].as_dict(), "threads": threads,
                       "tokens_per_round": round(v["tokens_per_round"], 2), "round_in_steps": round(v["round_in_steps"], 2)})
        print(condition, res["speedup"].label(unit="x"), f"threads {threads}", flush=True)
    if busy:
        busy.kill()
        busy.wait()
        print("stopped busy process", busy.pid, flush=True)
    out[condition] = clicks
print(json.dumps(out))
