"""course_lib.explore.explorer: one source of truth (the controls), exact sliders, layout."""

from __future__ import annotations

import ipywidgets as W
import pytest

from course_lib import AttentionInputError
from course_lib.explore import widgets
from course_lib.explore.explorer import Explorer, make_view, number_slider


def lesson_explorers() -> dict[str, Explorer]:
    return {name: getattr(widgets, name)() for name in widgets.__all__
            if name.endswith(("_explorer", "_budget"))}


def test_number_slider_holds_exact_decimals():
    s = number_slider(0.2483, -1.0, 1.0, 0.01, "w")
    values = [v for _, v in s.options]
    assert values[0] == -1.0 and values[-1] == 1.0 and len(values) == 201
    assert all(v == round(v, 2) for v in values), "no 0.30000000000000004 on the grid"
    assert all(label == f"{v:.2f}".replace("-0.00", "0.00") for label, v in s.options)
    assert s.value == 0.25 and s.continuous_update


def test_no_lesson_slider_can_snap_a_value_in_the_browser():
    """A FloatSlider sends back the value its step grid snaps to (0.2483 -> 0.25, 4 -> 3.98
    on a log slider), overwriting what a code cell has set: every slider is an exact grid."""
    for name, ex in lesson_explorers().items():
        for control in ex.controls.values():
            assert not isinstance(control, W.FloatSlider | W.FloatLogSlider | W.IntSlider), (
                name, control.description)
            if isinstance(control, W.SelectionSlider):
                assert control.value in [v for _, v in control.options], name


def test_set_matches_the_grid_and_refuses_values_off_it():
    ex = widgets.softmax_budget()
    ex.set(the=0.1 + 0.2)  # 0.30000000000000004 is the slider's 0.3
    assert ex.controls["the"].value == 0.3 and ex.controls["the"].label == "0.30"
    with pytest.raises(AttentionInputError, match=r"'the' must be one of \[-10\.0, -9\.9, "
                       r"… 10\.0\] \(202 values\) \(got 0\.255\)"):
        ex.set(the=0.255)
    with pytest.raises(AttentionInputError, match=r"'token' must be one of \['the', 'cat', "
                       r"'sat'\] \(got 'dog'\)"):
        widgets.step_explorer().set(token="dog")


def test_controls_sit_in_a_grid_with_labels_at_full_width():
    """Labels are never clipped ("move val...") and rows are even (no ragged wrap)."""
    for name, ex in lesson_explorers().items():
        grid = ex.widget.children[1]
        assert isinstance(grid, W.GridBox), name
        assert "minmax(min(100%, 22em), 1fr)" in grid.layout.grid_template_columns
        for control in grid.children:
            assert control.style.description_width == "initial", (name, control.description)
            assert control.layout.width == "auto"
    steps = widgets.step_explorer().controls["step"]
    # four wide buttons get a row of their own (grid_column would be undone by ipywidgets)
    assert steps.layout.grid_area == "auto / 1 / auto / -1" and steps.layout.grid_column is None
    # lesson 02's query components start a row together (issue 44: in a grid of three
    # columns, component 0 ended the first row and component 1 began the next, far apart)
    components = widgets.scores_explorer().controls
    assert components["x0"].layout.grid_area == "auto / 1 / auto / auto"
    assert components["x1"].layout.grid_area is None
    assert components["token"].layout.grid_area is None
    with pytest.raises(AttentionInputError, match=r"wide and new_row must name controls of "
                       r"this explorer, \['x'\] \(got \['y'\]\)"):
        Explorer({"x": number_slider(1.0, 0.0, 2.0, 0.5, "x")},
                 lambda x: make_view("", "", "", {}), "demo", new_row=["y"])


def test_on_change_sees_every_control_set_together():
    seen = []
    ex = Explorer({"a": number_slider(0, 0, 1, 0.5, "a"), "b": number_slider(0, 0, 1, 0.5, "b")},
                  lambda a, b: make_view("", f"{a} {b}", "", {}), "demo", on_change=seen.append)
    ex.set(a=0.5, b=1.0)
    ex.controls["a"].value = 1.0  # a move in the browser
    assert seen == [{"a": 0.5, "b": 1.0}, {"a": 1.0}]
    assert ex.description == "1.0 1.0"


def test_put_moves_a_slider_to_its_nearest_value_without_a_redraw():
    ex = widgets.scores_explorer()
    before = ex.view
    ex.put("x0", 0.4999)
    assert ex.controls["x0"].value == 0.5 and ex.view is before


def test_an_arrow_key_moves_a_number_slider_by_a_unit_a_student_thinks_in():
    """A slider's arrow key moves one option: every explorer's number slider has at most
    250 of them (lesson 04's budget had 2,001 over -10 ... 10, an arrow moved 0.01), and
    the budget's step is 0.1, with the lesson's own scores (0.71, 1.41) kept on it."""
    for name, explorer in lesson_explorers().items():
        for key, control in explorer.controls.items():
            if isinstance(control, W.SelectionSlider) and all(
                    isinstance(v, float) for _, v in control.options):
                assert len(control.options) <= 250, (name, key, len(control.options))
    budget = widgets.softmax_budget()
    values = [v for _, v in budget.controls["the"].options]
    assert budget.controls["the"].value == 0.71 and budget.controls["sat"].value == 1.41
    i = budget.controls["the"].index
    assert values[i - 1:i + 2] == [0.7, 0.71, 0.8] and values[:3] == [-10.0, -9.9, -9.8]
