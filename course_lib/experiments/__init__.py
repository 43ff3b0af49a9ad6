"""The measurements behind the lessons' claims, each with the figure that shows it.

- :mod:`course_lib.experiments.scaling`: unscaled scores grow like sqrt(d_k) and saturate
  softmax (lesson 03);
- :mod:`course_lib.experiments.cost`: attention's time and the table's memory as n grows
  (lesson 10);
- :mod:`course_lib.experiments.training`: W_Q and W_K trained with and without the scale
  (lesson 13);
- :mod:`course_lib.experiments.memory_cost`: the peak memory of tiled attention and the
  work of the KV cache, measured (lessons 14 and 15).

A lesson imports the one it uses: ``from course_lib.experiments import scaling``.
"""
