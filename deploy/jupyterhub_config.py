# JupyterHub for one class of "Attention, Term by Term" on one server: local Unix users
# (PAM passwords), one JupyterLab per user started as that user, nbgrader's filesystem
# exchange or (ATTENTION_HUB_EXCHANGE=ngshare) the ngshare service. Run as root:
#   jupyterhub -f /opt/attention-course/deploy/jupyterhub_config.py
# Step by step: docs/deploy.md. tests/hub runs this very file; the few ATTENTION_HUB_*
# environment variables below exist so that the test can use free ports, throw-away
# groups and its own state directory; a real deployment leaves them unset, except
# ATTENTION_HUB_EXCHANGE (ngshare) and ATTENTION_HUB_LOGIN with ATTENTION_HUB_LTI_* (logins
# from the LMS), which choose how the class runs.
import os

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)
env = os.environ.get

# Where the class's shared Python environment lives (built from /usr/bin/python3, readable
# by everyone: docs/deploy.md step 2).
ENV_PREFIX = env("ATTENTION_HUB_ENV", "/opt/attention-course/env")
HERE = os.path.dirname(os.path.abspath(__file__))
# The settings students' servers obey (formgrader and the course list off). Jupyter silently
# skips a config folder its user cannot read, so the hub installs them, at every start, where
# every user can read them (root-owned, in folders only root can change), and checks at every
# spawn, as the student, that they read exactly these files (see the spawn hook below).
STUDENT_SETTINGS = env("ATTENTION_HUB_STUDENT_SETTINGS",
                       "/opt/attention-course/student-jupyter-config")
# The instructors' own addition: formgrader served with the course's Content-Security-Policy
# (course_grading.formgrader_csp), installed the same way.
INSTRUCTOR_SETTINGS = env("ATTENTION_HUB_INSTRUCTOR_SETTINGS",
                          "/opt/attention-course/instructor-jupyter-config")
# The course's lessons, installed by root, read-only, beside the environment (docs/deploy.md
# step 2: $PREFIX/lessons). Every student's server makes the student's own copies of them in
# ~/attention-lessons/ as it starts, as the student (course_site.hub_lessons, enabled by
# student-jupyter-config).
LESSONS = env("ATTENTION_HUB_LESSONS",
              os.path.join(os.path.dirname(os.path.normpath(ENV_PREFIX)), "lessons"))
STUDENTS_GROUP = env("ATTENTION_HUB_STUDENTS_GROUP", "attention-students")
INSTRUCTORS_GROUP = env("ATTENTION_HUB_INSTRUCTORS_GROUP", "attention-instructors")
STATE_DIR = env("ATTENTION_HUB_STATE_DIR", "/srv/jupyterhub")
# Login shells in the users' servers (JupyterLab's Terminal, `bash -l`) find nbgrader and the
# class's Python through this snippet (deploy/profile.d/attention-course.sh). It touches
# every login shell on the machine, but changes only those that run in a hub server (the
# spawner sets ATTENTION_COURSE_BIN). Set ATTENTION_HUB_PROFILE_SNIPPET="" to not install it.
PROFILE_SNIPPET = env("ATTENTION_HUB_PROFILE_SNIPPET", "/etc/profile.d/attention-course.sh")

# --- network: the public side; put TLS in front (a reverse proxy) or set ssl_cert/ssl_key.
c.JupyterHub.bind_url = env("ATTENTION_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_bind_url = env("ATTENTION_HUB_API_URL", "http://127.0.0.1:8081")
c.ConfigurableHTTPProxy.api_url = env("ATTENTION_HUB_PROXY_API_URL", "http://127.0.0.1:8001")

# --- state: the hub's own database and cookie secret (not the gradebook).
c.JupyterHub.db_url = "sqlite:///" + os.path.join(STATE_DIR, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(STATE_DIR, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(STATE_DIR, "jupyterhub.pid")

# --- who may log in: members of the course's two Unix groups, with their Unix password
# ("pam", the default) or from the LMS ("lti": LTI 1.3, course_grading.lti_login; the
# platform's four ATTENTION_HUB_LTI_* settings below come from registering the tool in the
# LMS, docs/deploy.md "Logging in from the LMS"). Either way the users are the Unix users
# made from the roster (step 3), and their Unix group makes them students or instructors.
LOGIN = env("ATTENTION_HUB_LOGIN", "pam")
if LOGIN == "pam":
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.allowed_groups = {STUDENTS_GROUP, INSTRUCTORS_GROUP}
    c.PAMAuthenticator.admin_groups = {INSTRUCTORS_GROUP}
    c.PAMAuthenticator.open_sessions = False  # no login session records for a web login
elif LOGIN == "lti":
    from course_grading.lti_login import USERNAME_KEY, lti_authenticator

    lti = {name: env(f"ATTENTION_HUB_LTI_{name}", "")
           for name in ("ISSUER", "CLIENT_ID", "AUTHORIZE_URL", "JWKS_URL")}
    missing = [f"ATTENTION_HUB_LTI_{name}" for name, value in lti.items() if not value]
    if missing:
        raise ValueError(f"ATTENTION_HUB_LOGIN=lti needs {', '.join(missing)} (the LMS's "
                         "issuer, the tool's client id, the LMS's authorization and JWKS URLs)")
    c.JupyterHub.authenticator_class = lti_authenticator(STUDENTS_GROUP, INSTRUCTORS_GROUP)
    c.LTI13Authenticator.issuer = lti["ISSUER"]
    c.LTI13Authenticator.client_id = set(lti["CLIENT_ID"].split(","))
    c.LTI13Authenticator.authorize_url = lti["AUTHORIZE_URL"]
    c.LTI13Authenticator.jwks_endpoint = lti["JWKS_URL"]
    c.LTI13Authenticator.username_key = USERNAME_KEY  # the launch's unix_user parameter
    c.LTI13Authenticator.manage_groups = True  # its JupyterHub group: the Unix group's name
    c.LTI13Authenticator.username_pattern = r"^[a-z_][a-z0-9_-]{0,31}$"  # a Unix user name
else:
    raise ValueError(f"ATTENTION_HUB_LOGIN must be 'pam' or 'lti' (got {LOGIN!r})")
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

# --- the exchange between the servers. "filesystem" (the default): nbgrader's exchange
# folder on this machine (docs/deploy.md step 5). "ngshare": the ngshare service, run by
# the hub as its own Unix user with its own database, the only path between servers that
# share no files, as on Kubernetes (docs/deploy.md, "At larger scale").
EXCHANGE = env("ATTENTION_HUB_EXCHANGE", "filesystem")
if EXCHANGE not in ("filesystem", "ngshare"):
    raise ValueError(f"ATTENTION_HUB_EXCHANGE must be 'filesystem' or 'ngshare' (got {EXCHANGE!r})")
NGSHARE_SERVICE_URL = env("ATTENTION_HUB_NGSHARE_SERVICE_URL", "http://127.0.0.1:10101")
NGSHARE_USER = env("ATTENTION_HUB_NGSHARE_USER", "ngshare")
NGSHARE_STORAGE = env("ATTENTION_HUB_NGSHARE_STORAGE", "/srv/ngshare/files")
# The database URL holds a password: a file only root reads, passed to the service in its
# environment (never on a command line, which every user sees in `ps`).
NGSHARE_DB_URL_FILE = env("ATTENTION_HUB_NGSHARE_DB_URL_FILE", "/srv/ngshare/database-url")
if EXCHANGE == "ngshare":
    import grp

    with open(NGSHARE_DB_URL_FILE) as f:
        ngshare_db_url = f.read().strip()
    c.JupyterHub.services = [{
        "name": "ngshare",
        "url": NGSHARE_SERVICE_URL,
        "command": [os.path.join(ENV_PREFIX, "bin", "python"), "-m",
                    "course_exchange.ngshare_service", "serve", "--storage", NGSHARE_STORAGE,
                    # ngshare's admins (who may create courses): the instructors
                    "--admins", ",".join(sorted(grp.getgrnam(INSTRUCTORS_GROUP).gr_mem))],
        "user": NGSHARE_USER,
        "environment": {"NGSHARE_DATABASE_URL": ngshare_db_url},
    }]
    # Every server reaches ngshare through the hub's proxy, with its own hub token
    # (course_exchange.ngshare_exchange; the global nbgrader config reads NGSHARE_URL).
    c.Spawner.environment = {
        "NGSHARE_URL": c.JupyterHub.bind_url.rstrip("/") + "/services/ngshare/"}


from course_grading.student_settings import (  # noqa: E402 (after the paths it uses)
    SettingsUnreadable,
    install_settings,
    unread_settings,
    unsafe_folders,
)


def instructors_only(package, group):
    """Refuse to start while students could read ``package`` (a module's ``__path__[0]``).

    course_grading holds the quiz's answers (checkpoint_answers.py) and the grader; every
    server runs the same environment, so it must lie inside a folder that only root and the
    instructors' group may enter (docs/deploy.md step 3). Then a student's Python finds no
    course_grading (``import course_grading`` fails) and its files cannot be opened by path.
    """
    import grp
    import stat

    gid = grp.getgrnam(group).gr_gid
    folder = os.path.dirname(os.path.realpath(package))
    while True:
        st = os.stat(folder)
        mode = stat.S_IMODE(st.st_mode)
        closed = not mode & stat.S_IXOTH and (st.st_gid in (0, gid) or not mode & stat.S_IXGRP)
        if closed and st.st_uid == 0 and not mode & (stat.S_IWGRP | stat.S_IWOTH):
            return
        if folder == os.path.dirname(folder):
            raise RuntimeError(
                f"Not starting: students could read the instructors' package {package} (the "
                "quiz's answers): no folder above it is closed to everyone but root and the "
                f"group {group!r}. Move it into such a folder (docs/deploy.md step 3).")
        folder = os.path.dirname(folder)


import course_grading  # noqa: E402 (root reads it wherever it lies)

# (ATTENTION_HUB_GRADING_PACKAGE: tests/test_kubernetes.py reads this file in a checkout)
instructors_only(env("ATTENTION_HUB_GRADING_PACKAGE", course_grading.__path__[0]),
                 INSTRUCTORS_GROUP)


def lessons_only_root_changes(folder):
    """Refuse to start while anyone but root could change the lessons in ``folder``: every
    student's server copies them into the student's home, and a student who could change
    them would put their code into everyone's notebooks. A class without them only warns."""
    import logging
    import stat

    if not os.path.isdir(folder):
        logging.getLogger("JupyterHub").warning(
            "No lessons in %s (ATTENTION_HUB_LESSONS): students' servers start without "
            "their copies of the lessons; install them as docs/deploy.md step 2 says", folder)
        return
    bad = unsafe_folders(folder)
    for top, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                bad.append(f"{path} is a symbolic link")
            elif st.st_uid != 0 or st.st_mode & 0o022:
                bad.append(f"{path} (owner uid {st.st_uid}, mode "
                           f"{oct(stat.S_IMODE(st.st_mode))})")
    if bad:
        raise RuntimeError(
            f"Not starting: someone other than root could change the lessons in {folder}, "
            f"which every student's server copies: {'; '.join(bad[:5])}. Install them as "
            "docs/deploy.md step 2 says (root's, chmod -R a+rX,go-w).")


lessons_only_root_changes(LESSONS)
STUDENT_SETTINGS_DIGESTS = install_settings(os.path.join(HERE, "student-jupyter-config"),
                                            STUDENT_SETTINGS)
install_settings(os.path.join(HERE, "instructor-jupyter-config"), INSTRUCTOR_SETTINGS)


def install_file(src, dest):
    """Copy ``src`` to ``dest`` (root's, 0644, replaced in one step) if it differs."""
    with open(src) as f:
        text = f.read()
    try:
        with open(dest) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = dest + ".tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, dest)


if PROFILE_SNIPPET:
    install_file(os.path.join(HERE, "profile.d", "attention-course.sh"), PROFILE_SNIPPET)
# JupyterLab's defaults in the class's environment (every user's server reads them; a user's
# own settings still win): no news prompt, no update check (the class runs offline).
LAB_OVERRIDES = os.path.join(ENV_PREFIX, "share", "jupyter", "lab", "settings", "overrides.d")
os.makedirs(LAB_OVERRIDES, mode=0o755, exist_ok=True)
install_file(os.path.join(HERE, "lab-settings", "attention-course.json"),
             os.path.join(LAB_OVERRIDES, "attention-course.json"))
# Every server: the class's environment first on PATH, and named for login shells.
COURSE_BIN = os.path.join(ENV_PREFIX, "bin")
c.Spawner.environment = {**(c.Spawner.environment if "environment" in c.Spawner else {}),
                         "ATTENTION_COURSE_BIN": COURSE_BIN,
                         "ATTENTION_COURSE_LESSONS": LESSONS,
                         "PATH": COURSE_BIN + ":/usr/local/bin:/usr/bin:/bin"}


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
        path = [INSTRUCTOR_SETTINGS]
        if os.environ.get("JUPYTER_CONFIG_PATH"):
            path.append(os.environ["JUPYTER_CONFIG_PATH"])
        spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(path)
        return
    if EXCHANGE == "ngshare":
        # No scratch folder shared with anyone: a student's temporary files go to their own.
        # (Not the instructor's: the grading sandbox needs its scratch under /tmp.)
        spawner.environment["TMPDIR"] = private_tmp(name)
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
            "(docs/deploy.md).")
    path = [STUDENT_SETTINGS]
    if os.environ.get("JUPYTER_CONFIG_PATH"):
        path.append(os.environ["JUPYTER_CONFIG_PATH"])
    spawner.environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(path)


def private_tmp(name):
    """``~name/.tmp``, made by root for ``name`` with mode 0700 if it is not there."""
    import pwd

    user = pwd.getpwnam(name)
    path = os.path.join(user.pw_dir, ".tmp")
    if not os.path.isdir(path):
        os.mkdir(path, 0o700)
        os.chown(path, user.pw_uid, user.pw_gid)
    return path


c.Spawner.pre_spawn_hook = only_instructors_grade
