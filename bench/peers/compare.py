"""One GPT training step on this CPU: alpa's runtime against JAX/XLA:CPU and PyTorch, side by side.

The zoo's GPT (src/models/gpt.h) in each engine: `alpa run gpt-tiny ... --cluster local:1
--method data` (one in-process device, fast kernels), the same network written in JAX
(bench/peers/gpt_step_jax.py, the project's pinned jax from the venv) and in PyTorch
(bench/pytorch/gpt_step.py, f32 only, with each interpreter given by --torch-python that imports
torch). Same layers, hidden size, heads, sequence, vocabulary, batch, Adam (lr 0.001) and thread
count. The engines run in turn, round after round (a slow spell of a shared machine then touches
every engine alike); each run's time is the median of its steps after the first (compilation and
first-touch page faults), and each engine's figure the median of its rounds.

FLOP/s counts the step's matmul FLOPs by Megatron-LM's formula (Narayanan et al., SC'21, eq. 3,
without recomputation): 72 B s L h^2 (1 + s / (6 h) + V / (12 L h)) for batch B, sequence s,
layers L, hidden h and vocabulary V. With --profile (a database written by `alpa profile
--cluster local:1` on this machine), efficiency is that over the measured f32 matmul peak.

    .venv/bin/python bench/peers/compare.py --config small     # or large, or --layers ... flags
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = {
    "small": {"layers": 2, "hidden": 256, "heads": 4, "seq": 128, "vocab": 1024, "batch": 8},
    "large": {"layers": 4, "hidden": 1024, "heads": 16, "seq": 512, "vocab": 8192, "batch": 4},
}


def cpu_description():
    model, flags = "unknown CPU", set()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    wanted = ["avx2", "fma", "f16c", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16"]
    return f"{model}, {os.cpu_count()} CPUs, " + " ".join(f for f in wanted if f in flags)


def step_flops(c):
    b, s, layers, h, v = c["batch"], c["seq"], c["layers"], c["hidden"], c["vocab"]
    return 72 * b * s * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h))


def config_flags(c):
    return [f"--{key}={value}" for key, value in c.items()]


def engines(args, config):
    """(name, dtype, command) of every engine to time."""
    common = config_flags(config) + [f"--steps={args.steps}", "--lr=0.001"]
    alpa = [str(REPO / "alpa"), "run", "gpt-tiny", *common, "--json", "--cluster", "local:1",
            "--method", "data"]
    jax = [sys.executable, str(REPO / "bench/peers/gpt_step_jax.py"), *common,
           f"--threads={args.threads}"]
    found = []
    for dtype in args.dtypes:
        found.append(("alpa", dtype, alpa + ["--dtype", dtype]))
        for binary in args.alpa_baseline:
            found.append((f"alpa {binary}", dtype, [binary, *alpa[1:], "--dtype", dtype]))
        found.append(("JAX/XLA:CPU", dtype, jax + ["--dtype", dtype]))
    for python in args.torch_python:
        version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                                 capture_output=True, text=True)
        if version.returncode != 0:
            print(f"note: {python} cannot import torch; PyTorch left out", file=sys.stderr)
            continue
        torch = [python, str(REPO / "bench/pytorch/gpt_step.py"), *common,
                 f"--threads={args.threads}"]
        found.append((f"PyTorch {version.stdout.strip()}", "f32", torch))
    return found


def median_step_s(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    document = json.loads(result.stdout)
    steps = document["steps"] if isinstance(document, dict) else document
    return statistics.median(step["time_s"] for step in steps[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    for key in CONFIGS["small"]:
        parser.add_argument(f"--{key}", type=int, help=f"override the config's {key}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--dtypes", default="f32,bf16", type=lambda text: text.split(","))
    parser.add_argument("--torch-python", action="append", default=[],
                        help="a Python interpreter with torch (repeat for each PyTorch)")
    parser.add_argument("--alpa-baseline", action="append", default=[], metavar="BINARY",
                        help="another alpa binary (an earlier commit's build) timed beside "
                             "this one, for a before/after in one run (repeatable)")
    parser.add_argument("--profile", help="alpa profile database of this machine (local:1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.steps < 2 or args.rounds < 1:
        sys.exit("error: --steps must be at least 2 (the first is left out) and --rounds >= 1")
    for dtype in args.dtypes:
        if dtype not in ("f32", "bf16"):
            sys.exit(f"error: --dtypes takes f32 and bf16, not {dtype}")
    config = dict(CONFIGS[args.config])
    config.update({k: getattr(args, k) for k in config if getattr(args, k) is not None})
    peak = None
    if args.profile:
        peak = json.load(open(args.profile))["derived"]["peak_flops"].get("f32")
        if not peak:
            sys.exit(f"error: {args.profile} has no f32 matmul peak (flagged or not measured); "
                     "profile again on a quiet machine")

    runs = engines(args, config)
    times = {(name, dtype): [] for name, dtype, _ in runs}
    for round_index in range(args.rounds):
        for name, dtype, command in runs:
            print(f"round {round_index + 1}/{args.rounds}: {name} {dtype}", file=sys.stderr)
            times[(name, dtype)].append(median_step_s(command))

    flops = step_flops(config)
    base = statistics.median(times[("alpa", args.dtypes[0])])
    rows = []
    for (name, dtype), samples in times.items():
        seconds = statistics.median(samples)
        rows.append({"engine": name, "dtype": dtype, "step_s": seconds,
                     "rounds_s": samples, "time_vs_alpa": seconds / base,
                     "gflops": flops / seconds / 1e9,
                     "efficiency": flops / seconds / peak if peak else None})
    if args.json:
        print(json.dumps({"cpu": cpu_description(), "threads": args.threads, "config": config,
                          "step_gflop": flops / 1e9, "peak_gflops": peak and peak / 1e9,
                          "rows": rows}, indent=1))
        return
    print(f"cpu     {cpu_description()}; {args.threads} threads")
    print(f"config  {' '.join(config_flags(config))}; {flops / 1e9:.1f} GFLOP a step; "
          f"{args.rounds} rounds of {args.steps} steps")
    reference = f"alpa {args.dtypes[0]}"
    header = f"{'engine':<22} {'dtype':<5} {'s/step':>8} {'rounds':>24} " \
             f"{'time/' + reference:>14} {'GFLOP/s':>8}"
    print(header + (f" {'of peak':>8}" if peak else ""))
    for row in rows:
        spread = "/".join(f"{s:.3f}" for s in row["rounds_s"])
        line = (f"{row['engine']:<22} {row['dtype']:<5} {row['step_s']:>8.3f} {spread:>24} "
                f"{row['time_vs_alpa']:>13.2f}x {row['gflops']:>8.1f}")
        print(line + (f" {row['efficiency']:>7.0%}" if peak else ""))
    for row in rows:
        if row["engine"] != "alpa":
            print(f"{reference} runs at {row['time_vs_alpa']:.2f}x the speed of "
                  f"{row['engine']} {row['dtype']}")


if __name__ == "__main__":
    main()
