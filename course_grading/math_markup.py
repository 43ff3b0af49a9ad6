"""The quiz's math as MathML, rendered on the instructor's side: no MathJax, no script.

nbconvert's pages leave ``$...$`` in the text for MathJax, which they load from a CDN:
formgrader's Content-Security-Policy (:mod:`course_grading.formgrader_csp`) and the
feedback's (:mod:`course_grading.feedback`) block it, and the course runs offline, so the
math showed as typed. :class:`RenderMath` turns the math of every markdown cell into MathML
(with ``latex2mathml``) before the page is rendered, the punctuation of its text as
character references (so that the page's markdown cannot make a link or emphasis of it);
browsers draw MathML themselves (Chromium since version 109), so nothing has to run in the
page.

Only markdown cells are touched, and only outside code (a student's written answer reaches
these pages as a fenced block of plain text, :mod:`course_grading.inert`, and stays as it
is). The MathML is parsed back and kept only when every element and attribute is one of
:data:`MATHML_ELEMENTS` and :data:`MATHML_ATTRIBUTES` (``latex2mathml`` copies ``\\text{}``
unescaped and turns ``\\href`` into an attribute); anything else stays as typed.

Examples
--------
>>> print(render_math("a row of $n$ weights"))
a row of <math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow><mi>n</mi>\
</mrow></math> weights
>>> render_math("`$HOME` and $\\\\text{<script>x</script>}$")
'`$HOME` and $\\\\text{<script>x</script>}$'
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

__all__ = ["MATHML_ATTRIBUTES", "MATHML_ELEMENTS", "MAX_FORMULA", "MAX_MARKDOWN", "RenderMath",
           "latex_to_mathml", "render_math"]

_NS = "{http://www.w3.org/1998/Math/MathML}"

#: The MathML elements a formula may hold (MathML Core's presentation elements).
MATHML_ELEMENTS = frozenset(
    "math mrow mi mn mo mtext mspace ms mfrac msqrt mroot msub msup msubsup munder mover "
    "munderover mtable mtr mtd mstyle mpadded mphantom menclose merror semantics "
    "annotation mmultiscripts mprescripts none".split())
#: The attributes they may carry: layout only, no link, no style, no event handler.
MATHML_ATTRIBUTES = frozenset(
    "display mathvariant stretchy fence form separator accent accentunder lspace rspace "
    "linethickness columnalign columnspacing columnlines rowalign rowspacing rowlines frame "
    "displaystyle scriptlevel minsize maxsize movablelimits symmetric largeop notation "
    "width height depth align equalrows equalcolumns encoding".split())

_CODE = re.compile(r"(`{3,}|~{3,})[^\n]*\n.*?(?:\n\1[^\n]*(?=\n|$)|\Z)|(`+).*?\2", re.S)
_MATH = re.compile(r"(?<![\\$])\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\d)", re.S)


def latex_to_mathml(tex: str, display: bool = False) -> str | None:
    """One formula as MathML, or None when it cannot be rendered safely.

    Parameters
    ----------
    tex : str
        The formula, without its ``$`` delimiters.
    display : bool
        A display formula (``$$...$$``, its own line) instead of an inline one.

    Examples
    --------
    >>> latex_to_mathml(r"\\sqrt{d_k}").count("<msqrt>")
    1
    >>> latex_to_mathml(r"\\href{javascript:alert(1)}{x}") is None
    True
    """
    from latex2mathml.converter import convert

    try:
        markup = convert(tex, display="block" if display else "inline")
        root = ET.fromstring(markup)
    except Exception:  # latex2mathml raises many kinds on LaTeX it does not know
        return None
    for element in root.iter():
        tag = element.tag.removeprefix(_NS) if isinstance(element.tag, str) else ""
        if tag not in MATHML_ELEMENTS or any(name not in MATHML_ATTRIBUTES
                                             for name in element.attrib):
            return None
    ET.register_namespace("", _NS[1:-1])
    markup = ET.tostring(root, encoding="unicode", short_empty_elements=False)
    # the page's markdown runs over the MathML next: text such as \text{[x](javascript:...)}
    # would become a link inside <mtext>, so its punctuation goes as character references
    return _TEXT.sub(lambda m: _PUNCT.sub(_reference, m.group(0)), markup)


_TEXT = re.compile(r"(?<=>)[^<]+(?=<)")
_PUNCT = re.compile(r"&\w+;|[!-/:-@\[-`{-~]")


def _reference(match: re.Match[str]) -> str:
    char = match.group(0)
    return char if len(char) > 1 else f"&#{ord(char)};"


#: A markdown cell longer than this, or a formula longer than :data:`MAX_FORMULA`, stays as
#: typed: latex2mathml takes about 10 s for 1 MB of ``$x$`` and writes 24 times as much.
MAX_MARKDOWN = 100_000
MAX_FORMULA = 2_000


def render_math(markdown: str) -> str:
    """Markdown with each ``$...$`` and ``$$...$$`` outside code replaced by MathML.

    A formula that :func:`latex_to_mathml` refuses, or longer than :data:`MAX_FORMULA`
    characters, stays as typed; so does all of a text longer than :data:`MAX_MARKDOWN`.
    """
    def formula(match: re.Match[str]) -> str:
        display = match.group(1) is not None
        tex = match.group(1) if display else match.group(2)
        if len(tex) > MAX_FORMULA:
            return match.group(0)
        mathml = latex_to_mathml(tex.strip(), display)
        return match.group(0) if mathml is None else mathml

    if len(markdown) > MAX_MARKDOWN:
        return markdown
    out, start = [], 0
    for code in _CODE.finditer(markdown):
        out.append(_MATH.sub(formula, markdown[start:code.start()]))
        out.append(code.group(0))
        start = code.end()
    out.append(_MATH.sub(formula, markdown[start:]))
    return "".join(out)


class RenderMath(Preprocessor):
    """Render the math of every markdown cell as MathML (:func:`render_math`)."""

    # on wherever it is listed (nbgrader registers its feedback preprocessors as they are)
    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell: Any, resources: Any, index: int) -> tuple[Any, Any]:
        """Rewrite one markdown cell's source; leave every other cell as it is."""
        if cell.cell_type == "markdown":
            cell.source = render_math(cell.source)
        return cell, resources
