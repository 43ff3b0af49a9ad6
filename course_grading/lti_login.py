"""Logging in to the class's JupyterHub from the LMS (LTI 1.3), onto the class's Unix users.

``jupyterhub-ltiauthenticator``'s :class:`~ltiauthenticator.lti13.auth.LTI13Authenticator`
checks the launch itself: the platform's signature (its JWKS), the issuer, the audience (the
tool's client id), the expiry and age of the ``id_token``, and that its nonce is the one this
browser was given. What it cannot know is this server: every hub user is a Unix user whom
``LocalProcessSpawner`` starts a JupyterLab as, and the Unix groups decide who reads the
quiz's answers (docs/deploy.md step 3). :func:`lti_authenticator` adds, at JupyterHub's own
extension points (``authenticate``, ``check_allowed``):

- **who**: the user name is the launch's custom parameter ``unix_user`` (set in the LMS's
  tool as ``unix_user=$User.username``); a launch without it is refused (the package would
  fall back to the LMS's opaque ``sub``), and so is a name that is not a member of the
  class's two Unix groups (``root``, say). Users are made ahead, from the roster, as for
  password logins: a launch never creates a Unix user.
- **which group**: the launch's course role (LTI's ``roles`` claim: ``membership#Instructor``
  or ``membership#Learner``) must agree with the user's Unix group; the user then lands in
  the JupyterHub group of the same name (``attention-instructors``, an admin, or
  ``attention-students``). An LMS cannot make a student an instructor on this server.
- **once**: a launch (its nonce) is taken once; the same ``id_token`` posted again, even
  with the cookies of the browser it was made for, is refused.

Every refusal is one line that says what happened and what to do, shown to the person and
logged. The pure parts are below; :func:`lti_authenticator` needs the package (the hub's
environment, ``deploy/requirements-hub.txt``).

Examples
--------
>>> lms_role({ROLES_CLAIM: [INSTRUCTOR_ROLE, LEARNER_ROLE]})
'instructor'
>>> lms_role({ROLES_CLAIM: ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"]})
"""

from __future__ import annotations

import grp
import pwd
import time
from typing import Any

__all__ = ["INSTRUCTOR_ROLE", "LEARNER_ROLE", "ROLES_CLAIM", "USERNAME_KEY", "SeenNonces",
           "launch_refusal", "lms_role", "lti_authenticator", "unix_role"]

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
#: The course roles of LTI 1.3 (context roles); an institution role says nothing about
#: this course.
INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
#: ``LTI13Authenticator.username_key``: the custom parameter ``unix_user`` of the launch.
USERNAME_KEY = "custom_unix_user"


def lms_role(id_token: dict[str, Any]) -> str | None:
    """``"instructor"``, ``"student"`` or None: the course role the launch claims.

    Instructor wins over Learner when the LMS sends both.
    """
    roles = id_token.get(ROLES_CLAIM)
    roles = set(roles) if isinstance(roles, list) else set()
    if INSTRUCTOR_ROLE in roles:
        return "instructor"
    if LEARNER_ROLE in roles:
        return "student"
    return None


def unix_role(name: str, students_group: str, instructors_group: str) -> str | None:
    """``"instructor"``, ``"student"`` or None: what the Unix groups make ``name``.

    A member (supplementary or primary) of ``instructors_group`` is an instructor, else of
    ``students_group`` a student; anyone else, or a name with no Unix user, is neither.
    """
    try:
        gid = pwd.getpwnam(name).pw_gid
    except KeyError:
        return None
    for role, group in (("instructor", instructors_group), ("student", students_group)):
        try:
            entry = grp.getgrnam(group)
        except KeyError:
            continue
        if name in entry.gr_mem or entry.gr_gid == gid:
            return role
    return None


def launch_refusal(name: str, id_token: dict[str, Any], students_group: str,
                   instructors_group: str) -> str | None:
    """Why the launch of ``name`` is refused on this server (one line), or None."""
    claimed = lms_role(id_token)
    here = unix_role(name, students_group, instructors_group)
    if here is None:
        return (f"Not logged in: the LMS sent the user name {name!r}, which is not a member "
                f"of {students_group!r} or {instructors_group!r} on this server. Ask the "
                "administrator to make the class's users from the roster (docs/deploy.md, "
                "step 3), with the names the LMS sends as unix_user.")
    if claimed is None:
        return (f"Not logged in: the LMS gave {name!r} no course role (Instructor or Learner) "
                "in this launch. Launch the tool from the course in the LMS, as a member of "
                "it.")
    if claimed != here:
        group = instructors_group if here == "instructor" else students_group
        article = "an" if claimed == "instructor" else "a"
        return (f"Not logged in: the LMS says {name!r} is {article} {claimed} of this course, "
                f"but on this server {name!r} is in {group!r}. Ask "
                "the administrator to put them in the right Unix group (docs/deploy.md, "
                "step 3).")
    return None


class SeenNonces:
    """The nonces of launches already taken, each kept until its ``id_token`` expires.

    >>> seen = SeenNonces()
    >>> seen.first_use("n1", expires=100.0, now=10.0), seen.first_use("n1", 100.0, now=20.0)
    (True, False)
    >>> seen.first_use("n1", expires=300.0, now=200.0)  # forgotten once expired
    True
    """

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def first_use(self, nonce: str, expires: float, now: float | None = None) -> bool:
        """Record ``nonce``; False if it was recorded before and has not expired."""
        now = time.time() if now is None else now
        for old in [n for n, until in self._until.items() if until < now]:
            del self._until[old]
        if nonce in self._until:
            return False
        self._until[nonce] = expires
        return True


def lti_authenticator(students_group: str, instructors_group: str) -> type:
    """The class's LTI 1.3 authenticator: ``LTI13Authenticator`` with the checks above.

    Configure it as the package documents, through ``c.LTI13Authenticator.*``
    (``issuer``, ``client_id``, ``authorize_url``, ``jwks_endpoint``) and
    ``c.LTI13LaunchValidator.*`` (``max_age``, ``time_leeway``).
    """
    from jupyterhub.utils import maybe_future
    from ltiauthenticator.lti13.auth import LTI13Authenticator
    from ltiauthenticator.lti13.constants import LTI13_CUSTOM_CLAIM
    from ltiauthenticator.lti13.error import LoginError
    from ltiauthenticator.lti13.validator import LTI13LaunchValidator
    from tornado.web import HTTPError

    seen = SeenNonces()

    class CourseLTI13Authenticator(LTI13Authenticator):
        """LTI 1.3 logins onto the class's Unix users and groups (course_grading.lti_login)."""

        def get_username(self, token: dict[str, Any]) -> str:
            """The launch's ``unix_user``; no fallback to the LMS's opaque ``sub``."""
            key = self.username_key
            where = token.get(LTI13_CUSTOM_CLAIM) if key.startswith("custom_") else token
            value = where.get(key.removeprefix("custom_")) if isinstance(where, dict) else None
            if not isinstance(value, str) or not value:
                raise LoginError(
                    f"Not logged in: the launch carries no {key.removeprefix('custom_')!r}. "
                    "Set the tool's custom parameter unix_user=$User.username in the LMS "
                    "(docs/deploy.md, Logging in from the LMS).")
            return value

        async def authenticate(self, handler: Any, data: Any = None) -> dict[str, Any]:
            model = await maybe_future(super().authenticate(handler, data))
            token = model["auth_state"] or {}
            name = self.normalize_username(model["name"])
            if not self.validate_username(name):
                raise HTTPError(403, f"Not logged in: the LMS sent the user name "
                                     f"{name[:64]!r}, which is not a user name of this server.")
            max_age = LTI13LaunchValidator(parent=self).max_age
            if not seen.first_use(str(token.get("nonce")),
                                  float(token.get("exp") or time.time() + max_age)):
                self.log.warning("LTI launch for %s refused: its nonce was used before", name)
                raise HTTPError(403, "Not logged in: this launch was used before. Open the "
                                     "tool again from the LMS.")
            refusal = launch_refusal(name, token, students_group, instructors_group)
            if refusal:
                self.log.warning("LTI launch refused: %s", refusal)
                raise HTTPError(403, refusal)
            role = lms_role(token)
            model.update(name=name, admin=role == "instructor",
                         groups=[instructors_group if role == "instructor" else students_group])
            return model

        def check_allowed(self, username: str, authentication: Any = None) -> bool:
            """Members of the class's two Unix groups (as PAM's ``allowed_groups``)."""
            return unix_role(username, students_group, instructors_group) is not None

        def any_allow_config(self) -> bool:
            return True  # check_allowed above is the allow config

    return CourseLTI13Authenticator
