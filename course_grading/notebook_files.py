"""Read a notebook file that a student controls, and say why not when it cannot be read.

Anything may arrive in ``submitted/``: a file cut in half, gigabytes, bytes that are not
UTF-8, valid JSON nested ten thousand levels deep (which makes Python's JSON parser raise
``RecursionError``), JSON that is not a notebook. :func:`read_notebook` never raises for
any of these: it returns the notebook, or ``None`` and one sentence naming what was
expected and what arrived. The grade table, the class report and the exchange read
students' notebooks through it, so that one broken file marks one submission
``ungraded`` and never stops the rest of the class.

Examples
--------
>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "deep.ipynb")
...     with open(path, "w") as f:
...         _ = f.write("[" * 100_000 + "]" * 100_000)
...     read_notebook(path)
(None, 'corrupt notebook (JSON nested too deeply to be a notebook)')
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["MAX_NOTEBOOK_BYTES", "read_notebook"]

#: The largest notebook file read (a quiz notebook is tens of kilobytes).
MAX_NOTEBOOK_BYTES = 20 << 20


def read_notebook(path: str | os.PathLike[str], max_bytes: int = MAX_NOTEBOOK_BYTES
                  ) -> tuple[Any, str | None]:
    """Read and validate a notebook; never raise for what the file holds.

    Parameters
    ----------
    path : path-like
    max_bytes : int
        Larger files are not read.

    Returns
    -------
    (NotebookNode or None, str or None)
        The notebook and None, or None and why it cannot be read.
    """
    import nbformat

    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            return None, f"notebook too large ({size:,} bytes; at most {max_bytes:,} are read)"
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        return None, f"notebook unreadable ({type(exc).__name__})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "corrupt notebook (not UTF-8 text)"
    try:
        data = json.loads(text)
    except RecursionError:
        return None, "corrupt notebook (JSON nested too deeply to be a notebook)"
    except ValueError:
        return None, "corrupt notebook (not valid JSON)"
    if not isinstance(data, dict):
        return None, f"corrupt notebook (JSON {type(data).__name__}, not a notebook object)"
    try:
        nb = nbformat.from_dict(data)
        nb = nbformat.convert(nb, 4) if nb.get("nbformat") != 4 else nb
        nbformat.validate(nb)
    except RecursionError:
        return None, "corrupt notebook (nested too deeply to be a notebook)"
    except Exception:  # nbformat raises many kinds for JSON that is not a notebook
        return None, "corrupt notebook (JSON but not a valid notebook)"
    return nb, None
