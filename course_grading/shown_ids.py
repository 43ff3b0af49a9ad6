"""Student-chosen text made safe for where the grading tools show it.

A student id is chosen by whoever submits: with nbgrader's local exchange it is the first
part of the submitted folder's name, so it can hold anything a file name can. The grading
tools echo ids (and the reasons next to them) in three places, each with its own danger:

* a terminal, where control characters (ANSI escapes, ``\\r``) could rewrite or hide lines;
* a CSV file opened in a spreadsheet, where a cell starting with ``=``, ``+``, ``-`` or ``@``
  is run as a formula (CSV injection);
* a Markdown or HTML report, where ``<``, ``[`` or ``|`` make HTML, links or new table
  columns.

Each function here turns one piece of such text into a form that shows the same characters
and runs or draws nothing. The files and folders are still found with the raw id.
"""

from __future__ import annotations

import html
import re

#: What one id may take in a terminal line; longer ids are cut with an ellipsis.
TERMINAL_WIDTH = 120

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Backslashed: these always; _ only where it could open or close emphasis (an underscore
# between letters or digits, as in shifted_key, never does).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|~$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def for_terminal(text: str, width: int | None = TERMINAL_WIDTH) -> str:
    r"""Printable characters only (each other one becomes ``?``), at most ``width`` long
    (``None``: any length).

    >>> for_terminal("ada\x1b[2J\rbob")
    'ada?[2J?bob'
    >>> len(for_terminal("x" * 500))
    120
    """
    shown = "".join(ch if ch.isprintable() else "?" for ch in str(text))
    return shown if width is None or len(shown) <= width else shown[: width - 1] + "…"


def for_csv(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text: a leading formula character gets a ``'``.

    Numbers (scores such as ``-0.5``) are left as numbers.

    >>> print(for_csv('=HYPERLINK("http://x","y")'))
    '=HYPERLINK("http://x","y")
    >>> for_csv("-0.5"), for_csv("ada")
    ('-0.5', 'ada')
    """
    text = str(cell)
    if not text.startswith(_FORMULA_START):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text


def for_markdown(cell: str) -> str:
    r"""Text for one Markdown table cell: HTML escaped, the characters that make emphasis,
    code, links, math or a new column backslashed, line breaks and controls as spaces.

    >>> print(for_markdown("<img src=x onerror=alert(1)> [a](javascript:x) | $b$"))
    &lt;img src=x onerror=alert(1)&gt; \[a\](javascript:x) \| \$b\$
    >>> print(for_markdown("shifted_key: stopped; _x_ and *y*"))
    shifted_key: stopped; \_x\_ and \*y\*
    """
    text = "".join(ch if ch.isprintable() else " " for ch in str(cell))
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def for_html(text: str) -> str:
    r"""Text for an HTML element: escaped, line breaks and controls as spaces.

    >>> print(for_html("<b>ada</b>\x1b]0;t\x07!"))
    &lt;b&gt;ada&lt;/b&gt; ]0;t !
    """
    return html.escape("".join(ch if ch.isprintable() else " " for ch in str(text)))
