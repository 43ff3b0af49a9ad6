"""What each new Jupyter or nbgrader process pays before it does anything: its imports.

Run:  .venv/bin/python benchmarks/import_cost.py [--repeats 7]
      .venv/bin/python benchmarks/import_cost.py --smoke   # jsonschema, 1 repeat (the suite)

jsonschema (imported by nbformat, and by jupyter_events, so by every Jupyter server, nbgrader
command, nbclient run and grading worker) checks the ``iri`` format with ``rfc3987_syntax``
when the GPL ``rfc3987`` package is absent. ``rfc3987_syntax`` builds Earley parsers for
its grammar when imported: about 1.5 s of CPU here, in every such process, for a format no
Jupyter schema uses. With ``rfc3987`` installed (the ``grading`` extra has it) jsonschema
takes that one and never imports ``rfc3987_syntax``.

For each module below, in fresh interpreters of this environment, side by side: the time
to import it as installed, and with ``rfc3987`` hidden (``sys.modules['rfc3987'] = None``,
so jsonschema falls back to ``rfc3987_syntax`` as it does where ``rfc3987`` is not
installed). The two alternate, in a rotating order; the table gives medians and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

MODULES = ("jsonschema", "nbformat", "jupyter_server.serverapp", "nbgrader.apps")
HIDE = "import sys; sys.modules['rfc3987'] = None; "


def _import_seconds(module: str, hide: bool) -> float:
    code = (HIDE if hide else "") + f"import {module}"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def _skips_the_iri_parser(module: str) -> bool:
    probe = f"import sys, {module.split('.')[0]}; print('rfc3987_syntax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.strip() == "False"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--smoke", action="store_true",
                        help=f"{', '.join(MODULES[:1])} only, 1 repeat: a check that it runs")
    args = parser.parse_args(argv)
    modules = MODULES[:1] if args.smoke else MODULES
    if args.smoke:
        args.repeats = 1
    if not _skips_the_iri_parser("jsonschema"):
        print("rfc3987 is not installed here (jsonschema imports rfc3987_syntax): install "
              "the grading extra, or `pip install rfc3987`, to compare")
        return 1
    print(f"{'module':28} {'as installed':>13} {'rfc3987 hidden':>15} {'ratio':>6}")
    for module in modules:
        times: dict[bool, list[float]] = {False: [], True: []}
        for i in range(args.repeats):
            for hide in ((False, True) if i % 2 == 0 else (True, False)):
                times[hide].append(_import_seconds(module, hide))
        fast, slow = statistics.median(times[False]), statistics.median(times[True])
        print(f"{module:28} {fast:12.2f}s {slow:14.2f}s {slow / fast:6.1f}")
    print(f"medians of {args.repeats} fresh interpreters each, alternating; wall time, "
          "interpreter start included")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
