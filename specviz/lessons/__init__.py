"""What the lessons compute on top of the generator.

admission and budget (DSpark's scheduler, as this app's Algorithm 1, and the Appendix A counterexample), parallel (block
drafters' marginals and joints), coupling (two ways to sample the same distribution), sweep
(DLoop's gate), race (plain against speculative decoding), cost (time per committed token),
checklist (what a reported speedup must state), bench (the command-line benchmark), inside (lesson 9:
what a block drafter reads, the true q, numerics, measuring a system, DLoop's details) and glossary
(every term the lessons use), and markup (token text shown as itself in a markdown sentence).
"""
