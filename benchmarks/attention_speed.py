"""How much does course_lib.attention add to the arithmetic of attention?

Run:  .venv/bin/python benchmarks/attention_speed.py [--repeats 31] [--sizes 64 128 ...]
      .venv/bin/python benchmarks/attention_speed.py --smoke   # n = 64, one round (the suite)

For n tokens in (64, 128, 256, 512, 1024, 2048) and d = 64 (Q, K, V all n x d, float64)
it times, side by side in one run:

* ``course_lib``: ``course_lib.attention(Q, K, V)``, with all its input checks, returning
  the output and the n x n weights;
* ``bare numpy``: the expression itself with no checks, ``Q @ K.T / sqrt(d)``, a stable
  softmax done in place, ``@ V`` (also returning both);
* ``torch SDPA``: ``torch.nn.functional.scaled_dot_product_attention`` on float64 tensors
  that share the numpy arrays' memory (it returns the output only), when torch is
  importable; otherwise a note says it was skipped. The course never needs torch.

The three are interleaved: every round calls each once, in an order that rotates from
round to round, so a busy moment on a shared machine lands on all of them alike. The
table gives the median of the rounds for each, the ratio of the medians course_lib / bare
numpy (the issue's target: at most 1.2 at n >= 256) and the median of the per-round ratios
("paired"), which cancels most of the noise of other processes because both calls of a
round run within milliseconds of each other. Before timing, the outputs are checked to
agree.

Threads: numpy's OpenBLAS and torch's OpenMP keep their idle threads spinning after each
call by default; interleaved in one process on a small machine, each then runs while the
other's idle threads hold the cores. So this script asks both to sleep at once when idle
(OMP_WAIT_POLICY=PASSIVE, OPENBLAS_THREAD_TIMEOUT=4) unless those are already set. Thread
counts stay the libraries' defaults; compare single-threaded with
``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attention_speed.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

# read by OpenBLAS and OpenMP when they load, so set before numpy and torch are imported
THREAD_SETTINGS = ("OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS",
                   "OMP_NUM_THREADS")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# E402: these imports must come after the thread settings above
import numpy as np  # noqa: E402

from course_lib import attention  # noqa: E402


def bare_numpy(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The equation with nothing around it: the floor course_lib is measured against."""
    weights = Q @ K.T / np.sqrt(Q.shape[-1])
    weights -= weights.max(axis=-1, keepdims=True)
    np.exp(weights, out=weights)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def torch_sdpa() -> Callable[[np.ndarray, np.ndarray, np.ndarray], object] | None:
    """torch's fused attention on float64 views of the same arrays, or None without torch."""
    try:
        import torch
        from torch.nn.functional import scaled_dot_product_attention
    except ImportError:
        return None

    def run(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> object:
        q, k, v = (torch.from_numpy(a) for a in (Q, K, V))  # no copy: shares the memory
        with torch.inference_mode():
            return scaled_dot_product_attention(q, k, v)

    run.torch = torch  # type: ignore[attr-defined]
    return run


def interleaved_times(
    fns: dict[str, Callable[[], object]], rounds: int
) -> dict[str, list[float]]:
    """Seconds per call for each function; each round calls every function once."""
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31, help="rounds per size (default 31)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512, 1024, 2048])
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="n = 64 only, one round: a check that it runs (the suite's)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats = [64], 1

    sdpa = torch_sdpa()
    print(f"numpy {np.__version__}; d = {args.d}; float64; median of {args.repeats} "
          "interleaved rounds")
    if sdpa is None:
        print("torch is not importable: the torch SDPA column is skipped "
              "(pip install torch==2.13.0 to measure it; the course does not need it)")
    else:
        torch = sdpa.torch  # type: ignore[attr-defined]
        print(f"torch {torch.__version__} with {torch.get_num_threads()} threads")
    print("thread settings: " + ", ".join(
        f"{name}={os.environ.get(name, '(unset)')}" for name in THREAD_SETTINGS))
    print(f"load average before the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs")
    torch_head = f" {'torch SDPA':>12}" if sdpa else ""
    print(f"{'n':>6} {'course_lib':>12} {'bare numpy':>12}{torch_head}"
          f" {'course_lib/bare':>16} {'paired':>7}")

    rng = np.random.default_rng(args.seed)
    for n in args.sizes:
        Q, K, V = (rng.normal(size=(n, args.d)) for _ in range(3))
        fns: dict[str, Callable[[], object]] = {
            "course_lib": lambda Q=Q, K=K, V=V: attention(Q, K, V),
            "bare numpy": lambda Q=Q, K=K, V=V: bare_numpy(Q, K, V),
        }
        out, weights = attention(Q, K, V)  # also the warm-up
        bare_out, bare_weights = bare_numpy(Q, K, V)
        np.testing.assert_allclose(out, bare_out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(weights, bare_weights, rtol=1e-12, atol=1e-15)
        if sdpa is not None:
            fns["torch SDPA"] = lambda Q=Q, K=K, V=V: sdpa(Q, K, V)
            np.testing.assert_allclose(sdpa(Q, K, V).numpy(), out, rtol=1e-9, atol=1e-12)
        times = interleaved_times(fns, args.repeats)
        med = {name: statistics.median(t) for name, t in times.items()}
        paired = statistics.median(
            lib / bare for lib, bare in zip(times["course_lib"], times["bare numpy"], strict=True)
        )
        cells = " ".join(f"{med[name] * 1e3:>10.3f}ms" for name in fns)
        print(f"{n:>6} {cells} {med['course_lib'] / med['bare numpy']:>16.2f} {paired:>7.2f}",
              flush=True)


if __name__ == "__main__":
    main()
