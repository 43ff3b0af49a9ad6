"""What a lesson shows: figures, their descriptions in words, and the interactive explorers.

None of it is the attention maths (that is :mod:`course_lib`'s own modules); these modules
draw it and let a student move it:

- :mod:`course_lib.explore.plots`: the lessons' figures, each a ``DescribedFigure`` that
  carries its description in words (alt text);
- :mod:`course_lib.explore.describe`: those words, computed from the same numbers;
- :mod:`course_lib.explore.widgets`: one explorer per idea (sliders, dropdowns), testable
  without a browser; :mod:`course_lib.explore.explorer` is their common machinery and
  :mod:`course_lib.explore.render` draws their pictures as HTML and SVG;
- :mod:`course_lib.explore.style`: the course's one palette, for light and dark themes.

A lesson imports the modules it uses: ``from course_lib.explore import plots, widgets``.
"""
