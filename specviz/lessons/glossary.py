"""The glossary: every term the lessons use, defined in a sentence or two, with where it comes from.

Each entry names its source: one of the two source documents by title (*How speculative
decoding checks ahead* or *Draft, Then Verify*, which themselves cite the DFlash, DSpark and DLoop
papers), or "this app" for a name, notation or definition the app supplies beyond the sources
(Algorithm 1, SPS, τ and Θ among them: neither source uses those names).

What it leaves out: drawing (course_pages/glossary.py renders the entries).
"""
CHECKS_AHEAD = "How speculative decoding checks ahead"
DRAFT_VERIFY = "Draft, Then Verify"
APP = "this app"

ENTRIES = [
    ("target", "The large model whose output speculative decoding must reproduce; it has the final say on "
               "every token.", CHECKS_AHEAD),
    ("drafter", "A cheaper model (or rule) that proposes the next few tokens for the target to check.", CHECKS_AHEAD),
    ("block drafter", "A drafter that prepares several proposal positions in one pass instead of one token at "
                      "a time (DFlash, DSpark).", CHECKS_AHEAD),
    ("autoregressive drafter", "A drafter that proposes one token at a time, each conditioned on the last; its "
                               "drafting cost grows with the block.", DRAFT_VERIFY),
    ("candidate history", "The accepted text H extended by some of the proposals (H a, H a b, ...); the target "
                          "scores all of them in one pass.", CHECKS_AHEAD),
    ("verifier", "The acceptance procedure that decides which proposals survive and which token the target "
                 "adds: greedy matching, speculative sampling, or target-draw matching.", CHECKS_AHEAD),
    ("greedy", "Decoding that always takes the highest-scoring token. Greedy matching keeps proposals while they "
               "equal the target's choice (transformers' n_matches rule).", CHECKS_AHEAD),
    ("n_matches", "A variable in the assisted generation code of Hugging Face transformers (version 4.46): "
                  "the number of proposals before the first mismatch, counted by adding up the mismatches "
                  "position by position and keeping the positions where that count is still 0.", CHECKS_AHEAD),
    ("assisted generation", "Hugging Face transformers' built-in speculative decoding: a small assistant model "
                            "drafts, the main model verifies.", CHECKS_AHEAD),
    ("stop rule", "If a block reaches end-of-text or the length limit and every proposal matched, one match is "
                  "dropped so the target supplies that last token itself; it equals the proposal, so it is "
                  "neither a correction nor a bonus.", CHECKS_AHEAD),
    ("correction", "The target's own token at the first rejected position, committed in place of the "
                   "rejected proposal.", CHECKS_AHEAD),
    ("bonus", "The extra token the target's last distribution supplies when every proposal survived.",
     CHECKS_AHEAD),
    ("speculative sampling", "The ratio-and-residual verifier: accept x ~ q with probability min(1, p(x)/q(x)); "
                             "at the first rejection draw from the residual.", CHECKS_AHEAD),
    ("residual", "normalize(max(0, p − q)): where a rejected proposal's replacement is drawn from; it supplies "
                 "the mass the drafter under-proposes.", CHECKS_AHEAD),
    ("target-draw matching", "Another valid coupling: draw the target's own token at each candidate history and "
                             "continue while it equals the proposal; the emitted token is a target sample either "
                             "way.", CHECKS_AHEAD),
    ("proposal distribution q", "The normalised probabilities of the sampling process the drafter really used, "
                                "after temperature and truncation; the verifier needs exactly these.", CHECKS_AHEAD),
    ("target distribution p", "The target's probabilities at a candidate history, after the same sampling "
                              "transformations.", CHECKS_AHEAD),
    ("acceptance length", "Tokens committed per target pass (accepted proposals plus the correction or "
                          "bonus).", DRAFT_VERIFY),
    ("KV cache", "The keys and values of tokens a model has already processed, kept so later tokens need not "
                 "recompute them.", CHECKS_AHEAD),
    ("processed vs committed", "Committed text is output; processed text is in the target's cache. The newest "
                               "committed token (the last correction or bonus) is not processed yet: the next "
                               "round feeds it in with the new proposals.", CHECKS_AHEAD),
    ("context features", "Hidden states of selected target layers, concatenated and projected; each draft layer "
                         "turns them into keys and values.", CHECKS_AHEAD),
    ("anchor", "The clean token at the start of a block drafter's input, normally the preceding target round's "
               "last token; in DLoop's later stages, the previous stage's last proposal.", CHECKS_AHEAD),
    ("mask slot", "A masked input position after the anchor whose token the block drafter predicts in its one "
                  "pass.", CHECKS_AHEAD),
    ("bidirectional attention", "Attention without a causal mask inside the block: every slot sees every other "
                                "slot in the same pass.", CHECKS_AHEAD),
    ("block size", "Conventions differ: DFlash counts the anchor inside its block size (block size − 1 new "
                   "predictions); DSpark gives one proposal per input position. This app's k is the number of "
                   "proposals.", CHECKS_AHEAD),
    ("DFlash", "A block drafter conditioned on the target's context features: an anchor plus mask slots, "
               "predicted together in one block-diffusion pass.", CHECKS_AHEAD),
    ("DSpark", "A block drafter whose expensive backbone stays parallel, plus a lightweight left-to-right Markov "
               "head, and a confidence head that budgets verification.", CHECKS_AHEAD),
    ("Markov head", "DSpark's head that adds a transition bias from the previously selected token to the next "
                    "position's base logits.", CHECKS_AHEAD),
    ("marginal", "One position's distribution on its own. For DSpark this app shows the backbone's softmax "
                 "without the Markov head: what its positions would say if blind.", APP),
    ("suffix decay", "A parallel drafter's quality falling off toward the end of its block, because positions "
                     "are blind to each other's choices.", DRAFT_VERIFY),
    ("conditional acceptance", "Among rounds that kept positions 1..i−1, the share that also kept position i; "
                               "unlike the plain share, it does not fall just because of prefix acceptance.", APP),
    ("confidence head", "DSpark's estimate of the probability that each proposal passes, given that all before "
                        "it survived.", CHECKS_AHEAD),
    ("prefix survival", "The product of the confidence head's conditional estimates up to a position: its "
                        "probability of belonging to the surviving prefix.", CHECKS_AHEAD),
    ("calibration", "Confidences whose magnitudes match how often proposals really survive; the scheduler's "
                    "price calculation needs it.", CHECKS_AHEAD),
    ("SPS", f"This app's name (neither source uses it) for the table *{CHECKS_AHEAD}* "
            "describes: target steps per second at each verification batch size, engine-specific and profiled "
            "at engine initialisation.", APP),
    ("τ and Θ", "This app's notation (neither source uses it) for what the scheduler weighs: τ expected "
                "committed tokens, B verification slots, Θ = τ · SPS(B) expected committed tokens per second.", APP),
    ("Algorithm 1", f"This app's name (neither source uses it) for the prefix scheduler *{CHECKS_AHEAD}* "
                    "describes, which prices expected committed output against the SPS table and stops "
                    "at the first non-improving extension. The order in which this app admits candidates, by prefix "
                    "survival, is this app's too: the source states none.", APP),
    ("non-anticipating admission", "Whether a candidate enters verification must not depend on that "
                                   "candidate's realised value or later candidates.", CHECKS_AHEAD),
    ("ragged and padded slots", "Ragged: each request verifies its own admitted length. Padded: every shortened "
                                "request is widened back to its original width (its anchor and whole draft), which "
                                "can spend the slots the scheduler intended to save.", CHECKS_AHEAD),
    ("DLoop", "Drafts another whole stage before a target check while the stage's summed log-probability "
              "passes a threshold; one check then verifies everything accumulated.", CHECKS_AHEAD),
    ("provisional features", "The drafter's own final-layer hidden states, standing in for target features at "
                             "positions the target has not processed (DLoop).", CHECKS_AHEAD),
    ("loop-aware training", "DLoop's training: unroll extra drafting stages and supervise the first and last; "
                            "same parameters, more training time and memory.", CHECKS_AHEAD),
    ("D-Loop", "A different method (with a hyphen): keep a prefix of a proposed block and rerun the same "
               "drafter to regenerate the block's suffix with the prefix revealed; it can also try several "
               "prefix boundaries. It refines within a block.", CHECKS_AHEAD),
    ("float32", "32-bit floating point: the precision the embedded models run in here.", APP),
    ("bfloat16", "16-bit floating point with float32's range and fewer mantissa bits; another computation "
                 "that can round a close call the other way.", APP),
    ("within implementation numerics", "The guarantees hold up to floating-point effects: another computation "
                                       "graph can change results and flip a greedy token.", CHECKS_AHEAD),
    ("critical path", "With overlapping phases, the elapsed time of the longest chain, not the sum of the "
                      "phases' durations.", CHECKS_AHEAD),
    ("tokens per second", "Aggregate tok/s measures the system's output rate; tok/s per user describes one "
                          "generation stream.", CHECKS_AHEAD),
    ("time to first token", "From the request to its first output token: includes stages (queueing, prompt "
                            "processing) that decode speed leaves out.", CHECKS_AHEAD),
    ("timed boundary", "Which work a reported time includes, e.g. prefill timed separately from decode.",
     CHECKS_AHEAD),
    ("token", "A piece of text the model reads and writes in one step: a word, part of a word, or punctuation.",
     CHECKS_AHEAD),
    ("leading space", "In this app's tokenizer a word's leading space belongs to its token (“ the”).", APP),
    ("round", "One draft, verify and commit cycle: the drafter proposes a block, the target checks it in one "
              "pass, and the kept tokens plus the target's own are committed.", DRAFT_VERIFY),
    ("draft, verify, commit", "The three phases of a round as lesson 1 steps through them: proposals only; the "
                              "target's verdicts; the text that was added.", APP),
    ("prompt lookup", "A drafter with no model: it finds the latest earlier place where the text ends the same "
                      "way and proposes what followed there. It proposes nothing when there is no such place.",
     APP),
    ("temperature", "Divides the scores before sampling: below 1 sharpens the distribution towards the likeliest "
                    "token, above 1 flattens it. Greedy decoding is the limit at 0.", APP),
    ("top-k", "Sampling only among the k likeliest tokens, renormalised; 0 means off here.", APP),
    ("random seed", "The number that starts the random number generator: the same seed repeats the same draws "
                    "in the same computation.", APP),
    ("total variation distance", "How far two distributions are apart: half the sum of their differences, "
                                 "from 0 (equal) to 1 (no overlap).", APP),
    ("tokens per check", "Tokens committed per target check (accepted proposals plus the correction or bonus): "
                         "the acceptance length, as this app's tables call it.", APP),
    ("speedup", "Plain decoding's time per token divided by speculative decoding's; meaningful only with its "
                "baseline and the conditions it was measured under.", CHECKS_AHEAD),
    ("break-even", "The number of tokens a round must commit to cost no more per token than plain decoding: "
                   "round time ÷ plain time per token.", CHECKS_AHEAD),
    ("prefill", "The target's pass over the prompt before the first new token; timed apart from decoding.",
     CHECKS_AHEAD),
    ("stage", "In DLoop, one block of k proposals; the gate decides after each stage whether to draft another "
              "before the target checks them all.", CHECKS_AHEAD),
    ("threshold g", "DLoop's gate: draft another stage while the stage's summed log-probability is at least g "
                    "(g ≤ 0; a lower g lets less confident stages through).", CHECKS_AHEAD),
    ("retrospective policy", "An admission policy that looks at an already sampled token's downstream "
                             "consequences and then decides whether to admit that token; it can favour particular "
                             "token values.", CHECKS_AHEAD),
    ("retrospective search", "This app's retrospective policy in lesson 5: an admission search without the stop "
                             "at the first non-improvement, which looks at later candidates, so what it admits can "
                             "depend on the drafted token's value.", APP),
    ("concurrency", "How many requests a server handles at the same time (its load).", CHECKS_AHEAD),
]

# The works the lessons cite: the two source articles, and the papers and code they discuss.
# (title, who, link or None where no public copy is known, what the lessons take from it,
#  which of its identifiers come from the sources and which this app adds; the sources give no links)
WORKS = [
    ("How speculative decoding checks ahead—and when it saves time", "source article", None,
     "every lesson: candidate histories, verification, DFlash, DSpark, DLoop, measuring a speedup", ""),
    ("Draft, Then Verify", "source article", None,
     "the home page and lessons 1, 2, 3, 4, 7 and 9: draft then verify, lossless output, suffix decay, "
     "verification capacity under load, acceptance length and per-token latency", ""),
    ("DFlash", "z-lab, arXiv 2602.06036", "https://arxiv.org/abs/2602.06036",
     "block drafting from the target's context features (lessons 3 and 9)",
     "both sources name DFlash; z-lab, the arXiv number and the link are this app's"),
    ("DSpark, released with its training code as DeepSpec", "DeepSeek", "https://github.com/deepseek-ai/DeepSpec",
     "the Markov head, the confidence head and the verification scheduler (lessons 3, 4, 5 and 9)",
     f"the title and DeepSeek are *{DRAFT_VERIFY}*'s words; the link is this app's"),
    ("DLoop", "NAVER AI, arXiv 2610.07659", "https://arxiv.org/abs/2610.07659",
     "more drafting stages before one check, loop-aware training, Tables 2 and A2 (lessons 6 and 8)",
     f"*{CHECKS_AHEAD}* names DLoop and its tables; NAVER AI, the arXiv number and the link are this app's"),
    ("Assisted generation in Hugging Face transformers, version 4.46", "Hugging Face",
     "https://github.com/huggingface/transformers/blob/v4.46.0/src/transformers/generation/utils.py",
     "the greedy verification code lesson 1 shows with a round's values",
     f"the version is *{CHECKS_AHEAD}*'s (v4.46.0); the link is this app's"),
]
TERMS = {term: {"definition": definition, "source": source} for term, definition, source in ENTRIES}


def lookup(term: str) -> dict | None:
    """An entry by its term, ignoring case.

    >>> lookup("anchor")["source"], lookup("ANCHOR") == lookup("anchor"), lookup("no such term")
    ('How speculative decoding checks ahead', True, None)
    """
    folded = {t.lower(): e for t, e in TERMS.items()}
    return folded.get(term.lower())


def matching(query: str) -> list[tuple[str, str, str]]:
    """Entries whose term or definition contains `query` (any case); all of them for an empty query.

    >>> [t for t, _, _ in matching("d-loop")]
    ['D-Loop']
    """
    q = query.strip().lower()
    return [e for e in ENTRIES if not q or q in e[0].lower() or q in e[1].lower()]
