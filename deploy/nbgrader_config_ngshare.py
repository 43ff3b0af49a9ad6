# The global nbgrader configuration of the course when the exchange is ngshare (servers that
# share no files: Kubernetes, or ATTENTION_HUB_EXCHANGE=ngshare on one server). Read by every
# user's nbgrader, students and instructor alike: install it as
# /etc/jupyter/nbgrader_config.py (in the single-user image on Kubernetes). See docs/deploy.md.
import os

from course_exchange.ngshare_exchange import configure

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# One course: students need not pass --course.
c.CourseDirectory.course_id = "attention-course"

# Every exchange step goes to ngshare, as the server's JupyterHub user (its token). The hub
# gives each server ngshare's address in NGSHARE_URL (deploy/jupyterhub_config.py; on
# Kubernetes, singleuser.extraEnv in deploy/kubernetes/jupyterhub-values.yaml).
configure(c, os.environ.get("NGSHARE_URL", "http://127.0.0.1:8000/services/ngshare/"))
