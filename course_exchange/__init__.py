"""The exchange between students' and instructors' servers: what both sides' nbgrader runs.

nbgrader's exchange steps over a shared folder (:mod:`course_exchange.exchange`, reading
submissions through :mod:`course_exchange.inbound`) or through the ngshare service
(:mod:`course_exchange.ngshare_exchange`, :mod:`course_exchange.ngshare_client`, and the
service's launcher :mod:`course_exchange.ngshare_service`). Students' servers import it
(``nbgrader submit`` uses ``PrivateSubmit``, or the ngshare steps), so it holds no answer,
hidden test or gradebook code: those stay in :mod:`course_grading`, which a class on
JupyterHub installs where only instructors can read it (docs/deploy.md).
"""
