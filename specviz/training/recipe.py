"""The recipe behind models/, read top to bottom: the stages in order, then every number the shipped
models were trained with, each beside why it is what it is.

corpus -> tokenizer -> target -> AR drafter -> target text -> block drafters -> cards.

Plain values only (no torch, no transformers, no trainers): the command line builds `train`'s
options from STAGES and STEPS on every call, and a `models` or a refused `generate` should not pay
for the trainers' imports. How a stage runs is specviz.training.stages; the trainers (lm.py,
block.py, target_text.py) keep the mechanics and take these numbers as arguments, so a test can
run them tiny. Which drafters exist and where each one's weights live is the drafter registry's
(specviz.generator.drafters.names).

`python -m specviz train all` runs every stage; each stage can be run alone and skips work that is
already done (the corpus and tokenizer files exist; the target text resumes from its partial file;
a model resumes from its checkpoint in `runs/`). Steps are fixed, not minutes, so a rerun trains
the same schedule. The target's and the block drafters' runs are longer than a working session:
they also carry over in `checkpoints/` (`target/`, `block/`, `block-mix/`, `loop/`: bf16 weights
and state, committed), which a fresh machine resumes from (specviz.training.lm).

>>> STEPS["target"], TARGET_RUN["lr"], BLOCK_RUN["K"], BLOCK_DRAFTER["target_layers"]
(4000, 0.0015, 8, [1, 4, 6])

What it leaves out: the corpus's own mix (specviz.training.corpus), hyperparameter search.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA, RUNS, MODELS = ROOT / "data", ROOT / "runs", ROOT / "models"
CARRY = ROOT / "checkpoints"
# each workload's held-out text, which no training stage reads: the cards measure on it
HELDOUT = {"prose": DATA / "heldout.txt", "code": DATA / "heldout_code.txt"}

STAGES = ["corpus", "tokenizer", "target", "drafter", "target-text", "block", "cards"]
# optimizer steps of each trained stage (the command line's --STAGE-steps). The target's
# 4000 steps of 16 x 256 tokens are about three passes over the corpus (two copies of the prose
# beside one of the code). A longer run with three prose copies overfit the prose: its held-out
# prose perplexity bottomed at 31.1 near the sixth pass over the novels and rose to 38.2 by the
# ninth, while code still fell (docs/benchmarks.md, "The target's held-out curve"); continued from
# these 4000 to 6000 steps, it ended worse on both (prose 29.13 -> 31.52, code 20.91 -> 21.28;
# "The target's held-out curve past its 4000 steps")
# The autoregressive drafter's 3000 steps: distilled longer, its held-out perplexity went on
# falling (prose 41.2 at step 600 to 31.6, code 79.4 to 43.9) and its acceptance at k = 4 rose
# from 2.07 to 2.33 on prose and 1.79 to 2.30 on code (docs/engine.md)
# The block drafters' 4000 steps on the long text, then `mix` steps on the drafting mix, then the
# loop-aware steps (the block drafters' section below)
STEPS = {"target": 4000, "drafter": 3000, "block": 4000, "mix": 700, "loop": 120}

# --- the tokenizer: byte-level BPE, trained once. While models/target/ ships one, the tokenizer
# stage copies it, so a retrained model set keeps the token ids the lessons and their saved traces
# were made with
VOCAB_SIZE = 6144

# --- the two Llama models, the target and the autoregressive drafter (specviz.training.lm)
# what both share: 512 positions, RoPE's base 10000 (Llama's)
LLAMA = dict(max_position_embeddings=512, rope_theta=10000.0)
# AdamW for both, with the usual small-LM settings (nanoGPT's betas and weight decay)
LM_ADAMW = dict(betas=(0.9, 0.95), weight_decay=0.1)
# the target: large enough that one decode step costs several milliseconds on a 2-core CPU, so its
# compute, not per-call overhead, dominates and a cheap drafter can pay (docs/engine.md)
TARGET_CONFIG = dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=8,
                     num_attention_heads=6, num_key_value_heads=2)
# its run: random 256-token windows, 16 a step; the held-out curve every 500 steps for its card
TARGET_RUN = dict(batch=16, seq_len=256, lr=1.5e-3, warmup=200, curve_every=500)
# the autoregressive drafter: one layer, distilled from the frozen target (KL only): a drafter is
# worth what it agrees with the target, and drafting must be cheap
DRAFTER_CONFIG = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2)
DRAFTER_RUN = dict(batch=16, seq_len=256, lr=2e-3, warmup=100, curve_every=300)

# --- the target's own text, what the block drafters train on (specviz.training.target_text): each
# row a window of `prompt_len` corpus tokens continued by the target, written `batch` rows at a time
TEXT_ROWS = dict(sequences=2048, prompt_len=32, batch=64)
# file -> (temperature, seed, tokens a row): half sampled, half greedy, as the engine serves both;
# each file's seeds pick other corpus windows. The long rows are the first phase's; the short ones
# (a 32-token window and 96 of the target's, before its greedy text loops) are the drafting mix's,
# beside corpus windows (specviz.training.block)
TARGET_TEXT = {"target_text.npy": (0.8, 0, 256), "target_text_greedy.npy": (0.0, 5000, 256)}
MIX_TEXT = {"target_text_short.npy": (0.8, 20000, 128), "target_text_short_greedy.npy": (0.0, 25000, 128)}

# --- the block drafters: DFlash, DSpark and DLoop's (specviz.training.block)
# one layer of their own, reading the hidden states of target layers spread over its depth
# (DFlash's context features): the second, the middle one and the one before the last
BLOCK_DRAFTER = dict(num_layers=1, target_layers=[1, TARGET_CONFIG["num_hidden_layers"] // 2,
                                                   TARGET_CONFIG["num_hidden_layers"] - 2])
# the runs trained side by side on the same batches, by run name (models/drafter-NAME; the
# carries' weights are keyed by it): DSpark's Markov head has rank 64, DFlash has none
VARIANTS = {"dflash": dict(markov_rank=0), "dspark": dict(markov_rank=64)}
# DLoop's drafter starts from the trained DSpark drafter and adds loop-aware steps: DLoop's
# Table 2 adds loop-aware training to a drafter already trained for one stage. Trained from
# scratch beside the others, half its supervision goes to the last stage and its first stage
# comes out weaker than DSpark's (measured 2.04 against 2.18 tokens a check under the same loop, k = 4).
LOOP = dict(markov_rank=64, loop_aware=True)
# AdamW without weight decay, and a 30-step warmup in each phase (specviz.training.lm.lr_at)
BLOCK_ADAMW = dict(weight_decay=0.0)
BLOCK_WARMUP = 30
# the drafting mix's batches: 16 rows of 128 tokens (as many tokens as the long text's 8 x 256) with
# 16 anchors each (as many blocks), half corpus windows; three anchors in four right after a miss;
# a lower peak rate than the long text's, since it continues a trained drafter with fresh moments
MIX = dict(batch=16, length=128, anchors=16, corpus_share=0.5, on_policy=0.75, lr=1.5e-3)
# the long text's batches: 8 rows of 256 tokens, 32 anchors each; blocks of K = 8 positions, the
# loss weighted by exp(-i/gamma) over position i (DFlash's), 3 stages unrolled for loop-aware
# training, and a quarter of the long text's rate for the loop-aware steps, which fine-tune DSpark's
BLOCK_RUN = dict(batch=8, anchors=32, K=8, loop_stages=3, gamma=4.0, lr=2e-3, loop_lr=5e-4, mix=MIX)
