"""The generator: what a student reads beside lesson 1.

engine (prefill, one round of draft / verify / commit, a whole run), verify (the three acceptance
rules), sampling (temperature, top-k, top-p), trace (a run recorded as plain data), models (loading
a model set), clock (timing a phase), cpu_linear (the weight layouts the models run with on a CPU)
and drafters/. Nothing here knows about lessons, figures or hosting: they use it, never the reverse.
"""
