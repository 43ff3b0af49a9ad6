"""The explorer: controls, a pure compute function of their values, and what it shows.

Every interactive figure of the lessons (:mod:`course_lib.explore.widgets`) is an
:class:`Explorer`. Its one source of truth is the value of its controls: the picture is
always computed from them, and setting a value in code (``explorer.set(...)``) moves the
control itself, so the page and the code cell show the same thing after either is used.

Two details keep it that way in the browser:

* Number sliders are ``SelectionSlider`` s over an exact grid of values
  (:func:`number_slider`). A ``FloatSlider`` snaps a value that is not on its step grid
  (``0.2483`` with step 0.01, or ``4.0`` on a logarithmic slider) in the browser and sends
  the snapped value back to the kernel, where it silently overwrites what a code cell has
  just set; a slider over an index has nothing to snap. Values set in code are matched to
  the grid, and a value off the grid is a clear error.
* :meth:`Explorer.set` changes several controls with one redraw at the end.

Layout: the controls sit in an ipywidgets ``GridBox`` of equal columns, each at least
22em wide (two or three to a row on a laptop, one on a phone), every label at its full
width (``description_width="initial"``): no label is clipped. A control with many options
(a row of buttons) spans the whole row, and the first of a group that belongs together (a
vector's components) starts a row, so that the group is not split across rows far apart.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
import numpy as np

from ..errors import AttentionInputError
from .describe import format_number
from .render import caption_html

__all__ = [
    "Explorer",
    "View",
    "checkbox",
    "choice_slider",
    "dropdown",
    "make_view",
    "number_slider",
    "toggle_buttons",
]


@dataclass(frozen=True)
class View:
    """What an explorer shows for one set of control values.

    Attributes
    ----------
    html : str
        What the browser shows: the picture (an HTML table or inline SVG, whose accessible
        name is the description) and the caption under it.
    description : str
        The view in words, with its numbers (the output's ``text/plain``).
    numbers : dict
        The numbers behind the view (floats and arrays), for code and tests.
    caption : str
        The one-line takeaway shown under the picture.
    """

    html: str
    description: str
    numbers: dict[str, Any] = field(default_factory=dict)
    caption: str = ""


def make_view(picture: str, description: str, caption: str, numbers: dict[str, Any]) -> View:
    """A :class:`View` whose HTML is ``picture`` followed by the caption."""
    return View(picture + caption_html(caption), description, numbers, caption)


# --------------------------------------------------------------------------------------
# controls
# --------------------------------------------------------------------------------------


def number_slider(
    value: float, lo: float, hi: float, step: float, label: str, *, decimals: int = 2,
    keep_start: bool = False,
) -> W.SelectionSlider:
    """A slider over the exact values ``lo, lo + step, ..., hi`` (each rounded to 10 places).

    One arrow key moves one ``step`` (Page Up and Page Down five): the grid is the unit a
    student moves in, so choose it for the quantity (0.1 on a score from -10 to 10).
    The start ``value`` is moved to the nearest grid value; with ``keep_start`` it is
    rounded to ``decimals`` decimals and added to the grid instead, so that a lesson's own
    numbers (a scaled score of 0.71) are shown as they are. Its readout is the value with
    ``decimals`` decimals.

    Examples
    --------
    >>> s = number_slider(0.2483, 0.0, 1.0, 0.01, "weight")
    >>> s.value, s.label, len(s.options)
    (0.25, '0.25', 101)
    >>> s = number_slider(0.7071, -1.0, 1.0, 0.1, "the", keep_start=True)
    >>> s.value, [v for _, v in s.options][16:20]
    (0.71, [0.6, 0.7, 0.71, 0.8])
    """
    n = round((hi - lo) / step)
    grid = [round(lo + k * step, 10) + 0.0 for k in range(n + 1)]  # + 0.0: no -0.0
    start = min(grid, key=lambda g: abs(g - value))
    if keep_start and lo <= value <= hi and not math.isclose(round(value, decimals), start):
        start = round(float(value), decimals) + 0.0
        grid = sorted([*grid, start])
    return choice_slider([(format_number(g, decimals), g) for g in grid], start, label)


def choice_slider(
    options: Sequence[tuple[str, Any]], value: Any, label: str
) -> W.SelectionSlider:
    """A slider over ``(label, value)`` options, e.g. d_k = 2, 4, ... 4096."""
    return W.SelectionSlider(options=list(options), value=value, description=label,
                             continuous_update=True)


def dropdown(options: Sequence[Any], value: Any, label: str) -> W.Dropdown:
    """A drop-down list of choices."""
    return W.Dropdown(options=list(options), value=value, description=label)


def toggle_buttons(options: Sequence[Any], value: Any, label: str) -> W.ToggleButtons:
    """A row of buttons, one of them pressed (``options`` may be ``(label, value)`` pairs)."""
    return W.ToggleButtons(options=list(options), value=value, description=label,
                           style={"button_width": "auto"})


def checkbox(value: bool, label: str) -> W.Checkbox:
    """A tick box with its label on the right."""
    return W.Checkbox(value=value, description=label, indent=False)


def _option_values(control: W.ValueWidget) -> list[Any] | None:
    options = getattr(control, "options", None)
    if options is None:
        return None
    return [o[1] if isinstance(o, tuple) else o for o in options]


def _preview(values: list[Any]) -> str:
    shown = [v if not isinstance(v, float) else float(f"{v:.6g}") for v in values]
    if len(shown) <= 8:
        return str(shown)
    return f"[{shown[0]!r}, {shown[1]!r}, … {shown[-1]!r}] ({len(shown)} values)"


def _match(name: str, control: W.ValueWidget, value: Any) -> Any:
    """The control's own value equal to ``value`` (floats matched to 1e-9), or an error."""
    options = _option_values(control)
    if options is None:
        return value
    for option in options:
        same = option == value
        if isinstance(option, float) and isinstance(value, int | float | np.floating):
            same = math.isclose(option, float(value), rel_tol=1e-9, abs_tol=1e-12)
        if same:
            return option
    raise AttentionInputError(f"'{name}' must be one of {_preview(options)} (got {value!r})")


# --------------------------------------------------------------------------------------
# the explorer
# --------------------------------------------------------------------------------------


class Explorer:
    """Controls, a compute function of their values, and the widget that shows the result.

    Parameters
    ----------
    controls : dict of str to ipywidgets value widgets
        Made with :func:`number_slider`, :func:`choice_slider`, :func:`dropdown`,
        :func:`toggle_buttons` or :func:`checkbox`.
    compute : callable
        ``compute(**values) -> View``; must not change anything.
    title : str
        Shown above the controls.
    on_change : callable, optional
        Called with a dict of the controls that just changed (one, for a move in the
        browser; all of them, for :meth:`set`) before recomputing, e.g. to load a token's
        vector into the sliders when the token changes (with :meth:`put`).
    wide : iterable of str
        Controls that take a whole row of the grid (rows of buttons).
    new_row : iterable of str
        Controls that start a row of the grid, in its first column: the first of a group
        that belongs together, such as a vector's components, which the controls ahead of
        it would otherwise push apart (one at the end of a row, the next on the row below).

    Examples
    --------
    >>> ex = Explorer({"x": number_slider(1.0, 0.0, 2.0, 0.5, "x")},
    ...               lambda x: make_view("", f"x is {x}", "", {}), "demo")
    >>> ex.set(x=1.5)
    'x is 1.5'
    >>> ex.set(x=1.2)
    Traceback (most recent call last):
    ...
    course_lib.errors.AttentionInputError: 'x' must be one of [0.0, 0.5, 1.0, 1.5, 2.0] (got 1.2)
    """

    def __init__(
        self,
        controls: dict[str, W.ValueWidget],
        compute: Callable[..., View],
        title: str,
        on_change: Callable[[dict[str, Any]], None] | None = None,
        wide: Iterable[str] = (),
        new_row: Iterable[str] = (),
    ) -> None:
        self.controls = controls
        self._compute = compute
        self._on_change = on_change
        self._hold = False
        # "auto", not "100%": a box's child stretches to its width, and ipywidgets' 2 px
        # margins on a 100% child would overflow it (a scrollbar under every explorer)
        self._output = W.HTML(layout=W.Layout(width="auto"))
        heading = W.HTML(f"<b>{html.escape(title)}</b>")
        wide, new_row = set(wide), set(new_row)
        unknown = sorted((wide | new_row) - set(controls))
        if unknown:
            raise AttentionInputError(f"wide and new_row must name controls of this explorer, "
                                      f"{sorted(controls)} (got {unknown})")
        for name, control in controls.items():
            control.style.description_width = "initial"
            # A whole row: the grid-area shorthand, because ipywidgets applies grid_area
            # after grid_column, and an empty grid_area removes the grid-column set before.
            # A new row: column 1, so that CSS grid's auto-placement moves it to the next row.
            area = ("auto / 1 / auto / -1" if name in wide
                    else "auto / 1 / auto / auto" if name in new_row else None)
            control.layout = W.Layout(width="auto", grid_area=area)
        grid = W.GridBox(
            list(controls.values()),
            layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(min(100%, 22em), "
                            "1fr))", grid_gap="2px 24px", align_items="center", width="100%",
                            max_width="72em"),
        )
        self.widget = W.VBox([heading, grid, self._output], layout=W.Layout(width="100%"))
        for name, control in controls.items():
            control.observe(self._changed(name), names="value")
        self.view: View = self.compute(**self.values())
        self._output.value = self.view.html

    def _changed(self, name: str) -> Callable[[dict[str, Any]], None]:
        def handler(change: dict[str, Any]) -> None:
            if self._hold:
                return
            self._notify({name: change["new"]})
            self.refresh()

        return handler

    def _notify(self, changed: dict[str, Any]) -> None:
        if self._on_change is not None:
            self._hold = True
            try:
                self._on_change(changed)
            finally:
                self._hold = False

    def put(self, name: str, value: Any) -> None:
        """Move a control to ``value`` without a redraw, for ``on_change`` callbacks.

        A number slider goes to its grid value nearest to ``value``.
        """
        control = self.controls[name]
        options = _option_values(control)
        if options is not None and all(isinstance(o, float) for o in options):
            value = min(options, key=lambda o: abs(o - float(value)))
        held, self._hold = self._hold, True
        try:
            control.value = _match(name, control, value)
        finally:
            self._hold = held

    def values(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: c.value for name, c in self.controls.items()}

    def _check_names(self, values: dict[str, Any]) -> None:
        unknown = set(values) - set(self.controls)
        if unknown:
            raise AttentionInputError(
                f"unknown control(s) {sorted(unknown)}; this explorer has "
                f"{sorted(self.controls)}"
            )

    def compute(self, **values: Any) -> View:
        """The view for these control values (pure: changes nothing)."""
        self._check_names(values)
        matched = {n: _match(n, self.controls[n], v) for n, v in values.items()}
        return self._compute(**{**self.values(), **matched})

    def refresh(self) -> None:
        """Recompute from the controls and send the new view to the browser."""
        self.view = self.compute()
        self._output.value = self.view.html

    def set(self, **values: Any) -> str:
        """Set controls by name (one redraw at the end) and return the new description.

        Raises
        ------
        AttentionInputError
            For an unknown control, or a value that is not one of the control's own.
        """
        self._check_names(values)
        matched = {n: _match(n, self.controls[n], v) for n, v in values.items()}
        for name, value in matched.items():
            self.put(name, value)
        self._notify(matched)
        self.refresh()
        return self.description

    @property
    def description(self) -> str:
        """The current view in words."""
        return self.view.description

    @property
    def numbers(self) -> dict[str, Any]:
        """The current numbers (floats and arrays)."""
        return self.view.numbers

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = self.description
        return bundle

    def __repr__(self) -> str:
        return self.description
