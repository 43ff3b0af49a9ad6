"""``python -m course_lib.tiny_gpt train`` and ``python -m course_lib.tiny_gpt evaluate``.

``train`` trains the model from scratch (:func:`course_lib.tiny_gpt.training.train`), prints
the loss and the held-out accuracy as it goes, measures the finished model on held-out
sequences, and writes ``induction.npz`` and ``induction.json`` into ``--out`` (the current
folder by default). ``--smoke`` runs a few steps only (the test suite runs it).

``evaluate`` loads a model (the shipped one, or ``--weights DIR``) and prints its held-out
accuracy, every head's scores and the accuracy with heads removed.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence

from ..errors import AttentionInputError
from . import circuit
from .shipped import DATA_FILE, PROVENANCE_FILE, load_model, write_run
from .training import EVAL_SEED, TrainingConfig, accuracy, held_out, train

#: held-out sequences the finished model is measured on (and ``evaluate`` uses)
HELD_OUT = 2000
_SMOKE = {"steps": 20, "eval_every": 10, "eval_size": 50}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_lib.tiny_gpt",
                                     description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    t = verbs.add_parser("train", help="train from scratch and write the weights")
    t.add_argument("--out", default=".", help="folder for induction.npz and induction.json "
                                              "(default: the current folder)")
    t.add_argument("--seed", type=int, default=TrainingConfig.seed)
    t.add_argument("--steps", type=int, default=TrainingConfig.steps)
    t.add_argument("--smoke", action="store_true",
                   help=f"a quick check that training runs: {_SMOKE['steps']} steps")
    e = verbs.add_parser("evaluate", help="measure a trained model on held-out sequences")
    e.add_argument("--weights", default=None,
                   help="a folder written by `train --out` (default: the shipped weights)")
    e.add_argument("--sequences", type=int, default=HELD_OUT)
    return parser


def _train(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.smoke:
        config = TrainingConfig(seed=args.seed, **_SMOKE)
        sequences = 200
    else:
        config = TrainingConfig(seed=args.seed, steps=args.steps)
        sequences = HELD_OUT
    print(f"training {config}", flush=True)
    run = train(config, log=lambda line: print(line, flush=True))
    print(f"{run.model!r}")
    cpu = time.process_time()
    evaluation = held_out(sequences)
    acc = accuracy(run.model, evaluation)
    scored = int(evaluation.scored.sum())
    command = shlex.join(["python", "-m", "course_lib.tiny_gpt", *argv])
    provenance = write_run(run, args.out, command=command, held_out_sequences=sequences,
                           held_out_accuracy=acc, scored_positions=scored)
    print(f"held-out accuracy {acc:.1%} on {sequences} sequences ({scored} scored positions, "
          f"seed {EVAL_SEED}); a letter at random: {circuit.chance():.1%}")
    print(f"training took {run.cpu_seconds:.1f} s of CPU time, {run.wall_seconds:.1f} s on "
          f"the clock (measuring: {time.process_time() - cpu:.1f} s of CPU time)")
    print(f"wrote {args.out}/{DATA_FILE} ({provenance['data_bytes']:,} bytes, sha256 "
          f"{provenance['data_sha256'][:16]}…) and {args.out}/{PROVENANCE_FILE}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    loaded = load_model(args.weights)
    print(repr(loaded))
    evaluation = held_out(args.sequences)
    scores = circuit.head_scores(loaded.model, evaluation)
    print(f"\nheld-out accuracy {accuracy(loaded.model, evaluation):.1%} on "
          f"{args.sequences} sequences (seed {EVAL_SEED})\n")
    print(scores)
    print()
    print(circuit.ablation(loaded.model, evaluation, scores))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    try:
        return _train(args, argv) if args.verb == "train" else _evaluate(args)
    except AttentionInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
