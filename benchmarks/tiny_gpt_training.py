"""Training lesson 16's model: how long it takes, and whether every seed learns one circuit.

Run:  nice -n 10 .venv/bin/python benchmarks/tiny_gpt_training.py [--seeds 0 1 2 3 4]
      [--steps 1500] [--sequences 2000]
      .venv/bin/python benchmarks/tiny_gpt_training.py --smoke   # seed 0, 6 steps (seconds)

For each seed, the recipe of ``python -m course_lib.tiny_gpt train`` (``TrainingConfig``
with that seed) runs in this process, then the finished model is measured on the held-out
sequences. One line per seed: the CPU time and the wall time of training, the held-out
accuracy, each head's job (named from its two scores, ``course_lib.tiny_gpt.circuit``), and
the accuracy with the previous-token heads removed, with the induction heads removed, with
both (the circuit), and with the head(s) of no job removed. Then the load average, which
stretches the wall time but not the CPU time.

A seed's numbers hold for this machine's BLAS: another may round a matrix product's last bit
otherwise, and training amplifies it (the run is then another run of the recipe).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence

from course_lib.tiny_gpt import TrainingConfig, circuit, held_out, train

#: --smoke: enough to run every step of the benchmark, far too few to learn anything.
SMOKE_STEPS = 6
SMOKE_SEQUENCES = 40


def _jobs_text(scores: circuit.HeadScores) -> str:
    return " ".join(f"{layer}.{head}:{job[:4]}" for (layer, head), job in scores.jobs.items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=TrainingConfig.steps)
    parser.add_argument("--sequences", type=int, default=2000,
                        help="held-out sequences the finished model is measured on")
    parser.add_argument("--smoke", action="store_true",
                        help=f"seed 0, {SMOKE_STEPS} steps, {SMOKE_SEQUENCES} held-out "
                        "sequences: a check that it runs, not a measurement")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.steps, args.sequences = [0], SMOKE_STEPS, SMOKE_SEQUENCES
    for name in ("steps", "sequences"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1 (got {getattr(args, name)})")
    evaluation = held_out(args.sequences)
    print(f"{args.steps} steps per seed; held-out: {args.sequences} sequences, "
          f"{int(evaluation.scored.sum())} scored positions; a letter at random "
          f"{circuit.chance():.1%}")
    print("seed   CPU s  wall s  accuracy  jobs (prev/indu/othe)                 "
          "without: previous-token  induction  circuit  other")
    for seed in args.seeds:
        run = train(TrainingConfig(seed=seed, steps=args.steps))
        scores = circuit.head_scores(run.model, evaluation)
        result = circuit.ablation(run.model, evaluation, scores)

        def without(heads: list[tuple[int, int]], result: circuit.Ablation = result) -> str:
            key = tuple(sorted(heads))
            return f"{result.removed[key]:.1%}" if key in result.removed else "-"

        previous = scores.heads_doing("previous-token")
        induction = scores.heads_doing("induction")
        others = scores.heads_doing("other")
        print(f"{seed:>4}  {run.cpu_seconds:>6.1f}  {run.wall_seconds:>6.1f}  "
              f"{result.full:>8.1%}  {_jobs_text(scores):<36}  "
              f"{without(previous):>23}  {without(induction):>9}  "
              f"{without(previous + induction):>7}  {without(others):>5}", flush=True)
    one, five, fifteen = os.getloadavg()
    print(f"load average {one:.1f} {five:.1f} {fifteen:.1f} ({os.cpu_count()} CPUs), "
          f"{time.strftime('%Y-%m-%d')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
