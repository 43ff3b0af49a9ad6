"""``python -m course_site``: build the offline site (``--serve`` to serve it too)."""

from __future__ import annotations

import sys

from .build import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
