"""Which sampling settings make lesson 2's sampled continuations read as words, and what they do to
lesson 2's figures. The figures of specviz.lessons.sampling.READABLE came from it.

Run from the repository root: `python -m scripts.sampling_defaults [first candidate]`. For each candidate (temperature,
top-k, top-p) it samples, as lesson 2's "Sample three continuations" does, 20 new tokens after every
preset with plain sampling and with speculative sampling (the first drafter), seeds 1 to 3, and
scores each text by `specviz.lessons.readable.word_share` against the words of the held-out text
(data/heldout.txt and data/heldout_code.txt, written by `python -m specviz train corpus`). For the
same settings it prints lesson 2's acceptance (Σ min(p, q)) and the distance between p and q
(total variation) after each preset with the default drafter, the two figures whose meaning the
choice must keep: an acceptance near 1 or a distance near 0 would leave the lesson nothing to show.
"""
import json
import re
import statistics
import sys

from specviz.generator.engine import Generation
from specviz.generator.models import load_embedded
from specviz.generator.sampling import SamplingSettings
from specviz.generator.settings import Settings
from specviz.lessons import sampling
from specviz.lessons.presets import PRESETS
from specviz.lessons.readable import word_share

CANDIDATES = [SamplingSettings(1.0), SamplingSettings(1.0, top_p=0.9), SamplingSettings(0.8),
              SamplingSettings(0.8, top_p=0.9), SamplingSettings(0.7, top_p=0.9), SamplingSettings(0.8, top_k=20),
              SamplingSettings(0.7, top_k=20), SamplingSettings(1.0, top_k=40), SamplingSettings(0.9, top_k=40),
              SamplingSettings(0.9, top_p=0.95)]
CANDIDATES = CANDIDATES[int(sys.argv[1]) if len(sys.argv) > 1 else 0:]   # resume from a candidate
SEEDS = (1, 2, 3)

m = load_embedded()
drafter = list(m.drafter_models)[0]
words = set()
for name in ("data/heldout.txt", "data/heldout_code.txt"):
    words |= {w.lower() for w in re.findall(r"[A-Za-z]+", open(name).read())}
summary = []
for s in CANDIDATES:
    shares, worst = [], (1.0, "")
    for prompt in PRESETS:
        for d in (None, drafter):
            for seed in SEEDS:
                g = Generation(m, prompt, Settings(drafter=d, verifier="sampling", k=4, max_new_tokens=20,
                                                   sampling=s, seed=seed))
                g.run()
                share = word_share(g.text(), words)
                shares.append(share)
                worst = min(worst, (share, g.text()))
    accept, distance = [], []
    for prompt in PRESETS:
        p, q = sampling.next_token_distributions(m, prompt, drafter, s)
        accept.append(float(p.minimum(q).sum()))
        distance.append(float((p - q).abs().sum() / 2))
    row = {"temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p,
           "word share (median, lowest)": [round(statistics.median(shares), 3), round(min(shares), 3)],
           "acceptance Σ min(p, q) (lowest, highest)": [round(min(accept), 3), round(max(accept), 3)],
           "distance p-q (lowest, highest)": [round(min(distance), 3), round(max(distance), 3)],
           "first preset's acceptance, distance": [round(accept[0], 3), round(distance[0], 3)],
           "least readable text": worst[1]}
    summary.append(row)
    print(json.dumps(row, ensure_ascii=False), flush=True)
