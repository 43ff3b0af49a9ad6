"""course_grading.math_markup: the quiz's math as MathML, and nothing a formula could smuggle."""

from __future__ import annotations

import pytest

from course_grading.math_markup import latex_to_mathml, render_math


def test_inline_and_display_math_become_mathml():
    out = render_math("divide by $\\sqrt{d_k}$:\n\n$$\\frac{QK^T}{\\sqrt{d_k}}$$")
    assert out.count("<math ") == 2 and 'display="inline"' in out and 'display="block"' in out
    assert "$" not in out and "<msqrt>" in out and "<mfrac>" in out


@pytest.mark.parametrize("text", [
    "```\n$x$ in a fence\n```",
    "inline `$HOME` code",
    "~~~python\nprice = '$5 or $6'\n~~~",
])
def test_code_is_left_as_it_is(text):
    assert render_math(text) == text


@pytest.mark.parametrize("tex", [
    "\\text{<script>alert(1)</script>}",
    "\\href{javascript:alert(1)}{x}",
    "\\text{<img src=x onerror=alert(1)>}",
    "\\style{color:red}{x}",
    "\\color{red}{x}",
    "\\class{a}{x}",
    '\\text{<annotation-xml encoding="text/html"><img/></annotation-xml>}',
    "\\text{<maction actiontype=toggle>x</maction>}",
])
def test_a_formula_that_would_carry_markup_stays_as_typed(tex):
    assert latex_to_mathml(tex) is None
    assert render_math(f"a ${tex}$ b") == f"a ${tex}$ b"


def test_markup_characters_are_escaped_or_the_formula_is_refused():
    out = latex_to_mathml("a < b")
    assert out is not None and "<mo>&lt;</mo>" in out
    assert latex_to_mathml("\\text{a & b}") is None  # latex2mathml leaves the & bare


@pytest.mark.parametrize("tex", [
    "\\text{[x](javascript:alert(1))}",
    "\\text{![i](http://evil.invalid/x.png)}",
    "\\text{**b** _i_ ~~s~~ https://evil.invalid}",
])
def test_text_in_a_formula_is_not_markdown_once_the_page_renders(tex):
    """latex2mathml copies ``\\text{}`` into ``<mtext>`` and the page's markdown then runs
    over it: the formula's text must come out as the same characters, not as a link."""
    from nbconvert.filters.markdown import markdown2html

    page = markdown2html(render_math(f"${tex}$"))
    assert "<math" in page
    for tag in ("<a ", "<img", "<strong", "<em", "<code", "<del"):
        assert tag not in page


@pytest.mark.parametrize("text", [
    "$x$ " * 250_000,                   # 1 MB of formulas
    "$" + "x+" * 500_000 + "x$",        # one formula of 1 MB
    "a $" + "x+" * 5_000 + "x$ b",      # one long formula in a short text
])
def test_huge_math_stays_as_typed_in_bounded_time(text):
    """latex2mathml took 9.9 s on each of the first two (and wrote 24 MB for the first)."""
    import time

    start = time.perf_counter()
    assert render_math(text) == text
    assert time.perf_counter() - start < 0.5
