"""The one error class of the course library.

Every function in :mod:`course_lib` that is handed something it cannot use raises
:class:`AttentionInputError`. Its message names the argument, what was expected and what
arrived, so a student reading it knows what to change without opening the library.
"""

from __future__ import annotations

__all__ = ["AttentionInputError"]


class AttentionInputError(ValueError):
    """Raised when an input to the attention math is not what the equation needs.

    A subclass of :class:`ValueError`, so ``except ValueError`` still catches it.

    Examples
    --------
    >>> import numpy as np
    >>> from course_lib import scores
    >>> scores(np.ones((3, 2)), np.ones((4, 3)))
    Traceback (most recent call last):
    ...
    course_lib.errors.AttentionInputError: K has d_k=3 columns but Q has d_k=2 (Q shape (3, 2), ...
    """
