"""Peak memory and time without the n x n table: tiled attention, and the KV cache.

Run:  .venv/bin/python benchmarks/tiled_memory.py [--sizes 256 512 1024 2048] [--d 64]
      [--block 32] [--repeats 7] [--causal]
      .venv/bin/python benchmarks/tiled_memory.py --smoke   # n = 32, 64, 128, d = 8, 1 round

Prints, side by side in one run, for each n (Q, K, V all n x d, float64):

1. ``course_lib.attention`` (returns the whole n x n table) and
   ``course_lib.tiled_attention`` (blocks of --block queries x --block keys, online
   softmax): the peak memory of one call (tracemalloc, above what was allocated before)
   and the median time of --repeats interleaved rounds; then the log-log slopes of both,
   fitted on these numbers (memory near 2 and near 1). With --causal both use the causal
   mask (the tiled version skips the tiles above the diagonal).
2. One new token at position n: recomputing causal attention over all n tokens against
   ``KVCache.attend`` with the n tokens cached; the same columns and slopes.

The measuring is ``course_lib.experiments.memory_cost`` (the lessons call the same functions).
numpy's tiled version is slower than the whole table here: its tiles are many small numpy calls,
while real kernels win by keeping the tiles in fast on-chip memory, which a CPU run of
numpy cannot show. Threads: as in benchmarks/attention_speed.py, OpenBLAS and OpenMP are
asked to sleep when idle (OMP_WAIT_POLICY=PASSIVE, OPENBLAS_THREAD_TIMEOUT=4) unless set;
on a small shared machine compare single-threaded with
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/tiled_memory.py``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

# read by OpenBLAS and OpenMP when they load, so set before numpy is imported
THREAD_SETTINGS = ("OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS",
                   "OMP_NUM_THREADS")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# E402: these imports must come after the thread settings above
import numpy as np  # noqa: E402

from course_lib.experiments.memory_cost import (  # noqa: E402
    SIZES,
    measure_kv_cache_cost,
    measure_tiled_cost,
)

SMOKE_SIZES = (32, 64, 128)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--block", type=int, default=32, help="tile side (default 32)")
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--causal", action="store_true", help="both with the causal mask")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help=f"n = {', '.join(map(str, SMOKE_SIZES))}, d = 8, blocks of 16, "
                        "one round: a check that it runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:  # three sizes: the slopes are fitted on the last two
        args.sizes, args.d, args.block, args.repeats = list(SMOKE_SIZES), 8, 16, 1

    print(f"numpy {np.__version__}; d = {args.d}; float64; median of {args.repeats} "
          "interleaved rounds; peak memory by tracemalloc")
    print("thread settings: " + ", ".join(
        f"{name}={os.environ.get(name, '(unset)')}" for name in THREAD_SETTINGS))
    print(f"load average before the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs")
    tiled = measure_tiled_cost(args.sizes, args.d, block=args.block, causal=args.causal,
                               repeats=args.repeats, seed=args.seed)
    print(f"\n1. the whole table against tiles ({tiled.note})")
    print(tiled.table())
    print(f"   memory slopes on n >= {tiled.sizes[1]}: "
          + ", ".join(f"{s:.2f}" for s in tiled.memory_slopes(tiled.sizes[1])))
    cache = measure_kv_cache_cost(args.sizes, args.d, repeats=args.repeats, seed=args.seed)
    print(f"\n2. {cache.note}: recompute causal attention against the KV cache")
    print(cache.table())
    ratio = [r / c for r, c in zip(*cache.seconds, strict=True)]
    print("   recompute / cache time: " + ", ".join(
        f"{n}: {x:.0f}x" for n, x in zip(cache.sizes, ratio, strict=True)))
    print(f"load average after the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
