# JupyterHub for one class of "Attention, Term by Term" on one server: local Unix users
# (PAM passwords), one JupyterLab per user started as that user, nbgrader's filesystem
# exchange. Run as root:  jupyterhub -f /opt/attention-course/deploy/jupyterhub_config.py
# Step by step: deploy/README.md. tests/hub runs this very file; the few ATTENTION_HUB_*
# environment variables below exist so that the test can use free ports, throw-away
# groups and its own state directory; a real deployment leaves them unset.
import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
env = os.environ.get

# Where the class's shared Python environment lives (built from /usr/bin/python3, readable
# by everyone: deploy/README.md step 2).
ENV_PREFIX = env("ATTENTION_HUB_ENV", "/opt/attention-course/env")
HERE = os.path.dirname(os.path.abspath(__file__))
# The settings students' servers obey (formgrader and the course list off). Jupyter silently
# skips a config folder its user cannot read, so the hub installs them, at every start, where
# every user can read them (root-owned, in folders only root can change), and checks at every
# spawn, as the student, that they read exactly these files (see the spawn hook below).
STUDENT_SETTINGS = env("ATTENTION_HUB_STUDENT_SETTINGS",
                       "/opt/attention-course/student-jupyter-config")
STUDENTS_GROUP = env("ATTENTION_HUB_STUDENTS_GROUP", "attention-students")
INSTRUCTORS_GROUP = env("ATTENTION_HUB_INSTRUCTORS_GROUP", "attention-instructors")
STATE_DIR = env("ATTENTION_HUB_STATE_DIR", "/srv/jupyterhub")

# --- network: the public side; put TLS in front (a reverse proxy) or set ssl_cert/ssl_key.
c.JupyterHub.bind_url = env("ATTENTION_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_bind_url = env("ATTENTION_HUB_API_URL", "http://127.0.0.1:8081")
c.ConfigurableHTTPProxy.api_url = env("ATTENTION_HUB_PROXY_API_URL", "http://127.0.0.1:8001")

# --- state: the hub's own database and cookie secret (not the gradebook).
c.JupyterHub.db_url = "sqlite:///" + os.path.join(STATE_DIR, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(STATE_DIR, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(STATE_DIR, "jupyterhub.pid")

# --- who may log in: members of the course's two Unix groups, with their Unix password.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {STUDENTS_GROUP, INSTRUCTORS_GROUP}
c.PAMAuthenticator.admin_groups = {INSTRUCTORS_GROUP}
c.PAMAuthenticator.open_sessions = False  # no login session records for a web login
c.Authenticator.delete_invalid_users = True

# --- each user's JupyterLab runs as that Unix user, in their home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [os.path.join(ENV_PREFIX, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# Where nbgrader's global config is found; kept for the users if the hub was given it.
c.LocalProcessSpawner.env_keep = ["JUPYTERHUB_SINGLEUSER_APP", "LANG", "LC_ALL", "PATH",
                                  "PYTHONPATH", "JUPYTER_CONFIG_PATH"]


from course_grading.student_settings import (  # noqa: E402 (after the paths it uses)
    SettingsUnreadable,
    install_settings,
    unread_settings,
)

STUDENT_SETTINGS_DIGESTS = install_settings(os.path.join(HERE, "student-jupyter-config"),
                                            STUDENT_SETTINGS)


async def only_instructors_grade(spawner):
    """Students' servers run without nbgrader's formgrader and course list, or not at all.

    Their gradebook and sources are already out of reach (the instructor's 0700 home);
    this keeps the grading menus out of the students' JupyterLab too. A student who cannot
    read the settings gets no server (Jupyter would silently run without them) and a
    message that says why.
    """
    import grp

    instructors = set(grp.getgrnam(INSTRUCTORS_GROUP).gr_mem)
    name = spawner.user.name
    if name in instructors:
        return
    python = os.path.join(ENV_PREFIX, "bin", "python")
    problems = await unread_settings(name, STUDENT_SETTINGS, STUDENT_SETTINGS_DIGESTS, python)
    if problems:
        spawner.log.error("Not starting %s's server: %s cannot be read as %s: %s",
                          name, STUDENT_SETTINGS, name, "; ".join(problems))
        raise SettingsUnreadable(
            f"Your server was not started: the course's settings for students' servers "
            f"({STUDENT_SETTINGS}) cannot be read as user {name!r} ({'; '.join(problems)}). "
            "Without them JupyterLab would run with the instructor's grading tools. "
            "Ask the instructor to install them where every user can read them "
            "(deploy/README.md).")
    path = [STUDENT_SETTINGS]
    if os.environ.get("JUPYTER_CONFIG_PATH"):
        path.append(os.environ["JUPYTER_CONFIG_PATH"])
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(path)
    spawner.environment["PATH"] = os.path.join(ENV_PREFIX, "bin") + ":/usr/bin:/bin"


c.Spawner.pre_spawn_hook = only_instructors_grade
