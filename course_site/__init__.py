"""Build the course as an offline JupyterLite site: lessons, students' library, Python.

``./course site`` (or ``python -m course_site``) builds it; see :mod:`course_site.build`.
The pins of everything it serves are in :mod:`course_site.recipe`.
"""

from __future__ import annotations

__all__: list[str] = []
