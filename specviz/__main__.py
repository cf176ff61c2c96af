"""Command line: python -m specviz models|generate|bench|profile|train.

  models   --json                     the active model set
  generate --prompt TEXT ...          one generation, its text and a table of rounds; with
                                      --config FILE [--set NAME] a host's configured model set,
                                      loaded, checked and limited as the app does it
  bench    [--workload W] [--json]    plain decoding vs every drafter, per workload (specviz.lessons.bench)
  profile  [--json]                   this machine: target steps per second by verification
                                      width (DSpark's SPS table) and, on a CPU, the weight
                                      layouts timed at load (see specviz.generator.cpu_linear)
  train    [stage]                    rebuild the embedded models (see specviz.training.recipe)
"""
import argparse
import json
import sys

from specviz.generator.drafters.names import DRAFTER_LABELS   # names only: no torch, no models


def load():
    from specviz.generator.models import load_embedded
    return load_embedded()


def cmd_models(args):
    m = load()
    info = {"target": m.paths["target"], "drafters": m.paths["drafters"]}
    print(json.dumps(info) if args.json else "\n".join(
        [f"target    {info['target']}"] + [f"{k:9} {v or '(no model)'}" for k, v in info["drafters"].items()]))


def load_configured(path: str, name: str | None, check=lambda limits: None):
    """A host's model set, as the app loads it (specviz.hosting.config), once `check(limits)` has
    passed on the host's limits: a run the host refuses is refused before its models load."""
    from specviz.hosting.config import ModelSetError, load_config
    from specviz.hosting.model_sets import load_model_set
    try:
        config = load_config(path)
        check(config.limits)
        return load_model_set(config, name)
    except (ModelSetError, ValueError) as e:
        sys.exit(f"error: {e}")


def cmd_generate(args):
    # what the input says is checked before the models load (seconds) or the engine is imported
    if args.set and not args.config:
        sys.exit("error: --set names a model set of a config file: give --config FILE too")
    from specviz.generator.sampling import SamplingSettings
    from specviz.generator.settings import Settings, check_prompt
    from specviz.hosting.config import check_limits
    try:
        check_prompt(args.prompt)
        settings = Settings(drafter=None if args.drafter == "none" else args.drafter, verifier=args.verifier,
                            k=args.k, max_new_tokens=args.max_new_tokens, seed=args.seed,
                            loop_threshold=args.loop_threshold, max_stages=args.max_stages,
                            sampling=SamplingSettings(args.temperature, args.top_k, args.top_p))
    except ValueError as e:
        sys.exit(f"error: {e}")

    def within_limits(limits):
        if too_big := check_limits(limits, args.prompt, settings):
            raise ValueError(" ".join(too_big))

    m = load_configured(args.config, args.set, within_limits) if args.config else load()
    from specviz.generator.engine import Generation
    try:
        g = Generation(m, args.prompt, settings)   # what needs the models: the prompt's length in their context
    except ValueError as e:
        sys.exit(f"error: {e}")
    trace = g.run()
    if args.json:
        print(json.dumps({"text": g.text(), "prompt_token_ids": trace.prompt_ids, "new_token_ids": trace.new_ids,
                          "notices": trace.notices, "prefill_ms": trace.prefill_ms,
                          "rounds": [{"proposed": r.proposed, "accepted": r.accepted, "emitted": r.emitted_ids,
                                      "kinds": [e["kind"] for e in r.emitted], "draft_ms": r.draft_ms,
                                      "verify_ms": r.verify_ms, "overhead_ms": r.overhead_ms,
                                      "stages": r.drafter_info.get("stages")} for r in trace.rounds]}))
        return
    for n in trace.notices:
        print(f"note: {n}")
    print(args.prompt + g.text())
    print(f"\n{'round':>5} {'proposed':>8} {'accepted':>8} {'emitted':>7} {'draft ms':>9} {'verify ms':>9}  tokens")
    for r in trace.rounds:
        shown = " ".join(repr(e["text"]) + ("" if e["kind"] == "accepted" else "*") for e in r.emitted)
        print(f"{r.index:>5} {len(r.proposed):>8} {r.accepted:>8} {len(r.emitted):>7} {r.draft_ms:>9.2f} {r.verify_ms:>9.2f}  {shown}")
    total = sum(r.total_ms for r in trace.rounds)
    print(f"\n{len(trace.new_ids)} tokens in {len(trace.rounds)} rounds, {total / len(trace.new_ids):.2f} ms/token "
          f"(prefill {trace.prefill_ms:.1f} ms not counted); * = correction, bonus or the stop rule's token")


def spread_label(s: dict) -> str:
    """'1.52x (1.41-1.60)': a bench speedup's median and range over its repeats."""
    return f"{s['median']:.2f}x ({s['low']:.2f}-{s['high']:.2f})"


def cmd_bench(args):
    from specviz.lessons.bench import bench, bench_json
    from specviz.lessons.workloads import WORKLOADS
    if args.set and not args.config:
        sys.exit("error: --set names a model set of a config file: give --config FILE too")
    m = load_configured(args.config, args.set) if args.config else load()
    drafters = [d for d in (args.drafters.split(",") if args.drafters else m.drafter_models)]
    ks = [int(k) for k in args.ks.split(",")]
    names = list(WORKLOADS) if args.workload == "both" else [args.workload]
    res = {w: bench(m, drafters, ks, args.max_new_tokens, args.repeats, WORKLOADS[w],
                    progress=None if args.json else lambda rep, p: print(f"  {w} repeat {rep}: {p[:40]!r}", file=sys.stderr))
           for w in names}
    if args.json:
        print(json.dumps(bench_json(res)))
        return
    for w, r in res.items():
        print_bench(w, r)


def print_bench(workload: str, res: dict):
    """One workload's bench as a table: every variant of every drafter, the best one marked."""
    b = res["baseline"]
    print(f"\n{workload}: baseline {b['ms_per_token']:.2f} ms/token  ({res['settings']})")
    print(f"{'method':11} {'variant':>12} {'accept len':>10} {'stages':>6} {'ms/token':>9} {'speedup':>8} {'draft ms':>9} "
          f"{'verify ms':>9} {'overhead':>9} {'if drafting free':>16} {'speedup over repeats':>22}")
    for name, r in res["methods"].items():
        for k, x in r["variants"].items():
            mark = " <- best" if k == r["best"] else ""
            print(f"{name:11} {k:>12} {x['acceptance_length']:>10.2f} {x['stages']:>6.2f} {x['ms_per_token']:>9.2f} {x['speedup']:>7.2f}x "
                  f"{x['draft_ms']:>9.2f} {x['verify_ms']:>9.2f} {x['overhead_fraction']:>8.1%} "
                  f"{x['verify_only_speedup']:>15.2f}x {spread_label(x['speedup_spread']):>22}{mark}")
    if res["greedy_mismatches"]:
        print(f"WARNING: greedy output differed from plain decoding: {res['greedy_mismatches']}")


def cmd_profile(args):
    if not 1 <= args.max_width <= 64:   # before the imports and the models: a refusal is immediate
        sys.exit(f"error: --max-width must be between 1 and 64, got {args.max_width}")
    from specviz.lessons.presets import PRESETS
    from specviz.lessons.budget import sps_table
    from specviz.lessons.speedup import hardware
    from specviz.generator.cpu_linear import report
    m = load()
    table = sps_table(m, PRESETS[0], args.max_width, repeats=args.repeats)
    res = {"hardware": hardware(m.device), "sps": table["sps"], "sps_raw": table["raw"],
           "layouts": report(m.target, rows=(1, 5))}
    if args.json:
        print(json.dumps(res))
        return
    print(res["hardware"])
    print(f"\n{'width B':>7} {'ms':>7} {'SPS(B)':>8} {'tokens/s if all kept':>21} {'raw ms':>7}")
    for b, (steps, raw) in enumerate(zip(table["sps"], table["raw"]), 1):
        print(f"{b:>7} {1000 / steps:>7.2f} {steps:>8.1f} {b * steps:>21.0f} {1000 / raw:>7.2f}")
    if res["layouts"]:
        print("\nthe target's matrix products, µs per call by weight layout (timed at load):")
        names = [k for k in res["layouts"][0] if k.endswith("µs")]
        print(f"{'layer':>12} {'rows':>5} " + " ".join(f"{n:>18}" for n in names) + "  in use")
        for r in res["layouts"]:
            print(f"{r['layer']:>12} {r['rows']:>5} " + " ".join(f"{r[n]:>18}" for n in names) + f"  {r['in use']}")


def cmd_train(args):
    from specviz.training.recipe import STAGES, STEPS
    from specviz.training.stages import run_stage
    steps = {name: getattr(args, f"{name}_steps") for name in STEPS}
    for stage in STAGES if args.stage == "all" else [args.stage]:
        print(json.dumps({stage: run_stage(stage, steps)}), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m specviz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("models", help="print the active model set")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_models)
    s = sub.add_parser("generate", help="generate with speculative decoding and show every round")
    s.add_argument("--prompt", required=True)
    s.add_argument("--drafter", default="ar", help=f"{', '.join(DRAFTER_LABELS)} (or a configured set's drafter), "
                                                   "or none for plain decoding")
    s.add_argument("--config", help="a host's config file (specviz.example.toml); default: the embedded set")
    s.add_argument("--set", help="the config's model set to run (default: the config's default set)")
    s.add_argument("--verifier", default="greedy", choices=["greedy", "sampling", "match"])
    s.add_argument("-k", type=int, default=4, help="proposals per round (the sources' k)")
    s.add_argument("--max-new-tokens", type=int, default=48)
    s.add_argument("--temperature", type=float, default=1.0)
    s.add_argument("--top-k", type=int, default=0)
    s.add_argument("--top-p", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--loop-threshold", type=float, default=-2.0, help="DLoop's gate g (<= 0)")
    s.add_argument("--max-stages", type=int, default=3, help="DLoop's S")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_generate)
    s = sub.add_parser("bench", help="plain decoding vs each drafter, greedy, medians")
    s.add_argument("--drafters", default="", help="comma-separated; default: every drafter")
    s.add_argument("--ks", default="2,3,4,6,8", help="the k values to try, comma-separated")
    s.add_argument("--max-new-tokens", type=int, default=64)
    s.add_argument("--repeats", type=int, default=2)
    s.add_argument("--config", help="a host's config file; default: the embedded set")
    s.add_argument("--set", help="the config's model set to bench (default: the config's default set)")
    s.add_argument("--workload", choices=["both", "prose", "code"], default="both",
                   help="held-out prompts of one workload (default: both, reported separately)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_bench)
    s = sub.add_parser("profile", help="this machine: target speed by verification width, weight layouts")
    s.add_argument("--max-width", type=int, default=9, help="largest verification width B to time")
    s.add_argument("--repeats", type=int, default=5)
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_profile)
    s = sub.add_parser("train", help="rebuild the embedded models")
    s.add_argument("stage", nargs="?", default="all", help="corpus, tokenizer, target, drafter, target-text, block, cards or all")
    from specviz.training.recipe import STEPS    # plain numbers; not the stages, which import every trainer
    for stage in STEPS:
        s.add_argument(f"--{stage}-steps", type=int, default=STEPS[stage])
    s.set_defaults(fn=cmd_train)
    args = p.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
