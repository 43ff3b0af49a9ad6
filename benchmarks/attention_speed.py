"""How fast is course_lib.attention compared with a straightforward per-row Python loop?

Run:  .venv/bin/python benchmarks/attention_speed.py [--repeats 7]

For n tokens in (64, 256, 1024) and d = 64 it prints the median time of
``course_lib.attention`` (all rows at once, with its input checks) and of a loop that
handles one query row at a time, and their ratio. Medians, because machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from course_lib import attention


def attention_row_by_row(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The textbook loop: one query at a time, scores, softmax, blend."""
    out = np.empty((Q.shape[0], V.shape[1]))
    scale = 1.0 / np.sqrt(Q.shape[1])
    for i in range(Q.shape[0]):
        row = [float(Q[i] @ K[j]) * scale for j in range(K.shape[0])]
        top = max(row)
        exps = [np.exp(s - top) for s in row]
        total = sum(exps)
        out[i] = sum((e / total) * V[j] for j, e in enumerate(exps))
    return out


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--d", type=int, default=64)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"d = {args.d}, median of {args.repeats} runs (loop: 3 runs at n >= 1024)")
    print(f"{'n':>6} {'attention':>12} {'row loop':>12} {'ratio':>8}")
    for n in args.sizes:
        Q, K, V = (rng.normal(size=(n, args.d)) for _ in range(3))
        fast_out, _ = attention(Q, K, V)
        np.testing.assert_allclose(attention_row_by_row(Q, K, V), fast_out, atol=1e-10)
        fast = median_seconds(lambda Q=Q, K=K, V=V: attention(Q, K, V), args.repeats)
        slow_repeats = 3 if n >= 1024 else args.repeats
        slow = median_seconds(lambda Q=Q, K=K, V=V: attention_row_by_row(Q, K, V), slow_repeats)
        print(f"{n:>6} {fast * 1e3:>10.2f}ms {slow * 1e3:>10.1f}ms {slow / fast:>7.0f}x")


if __name__ == "__main__":
    main()
