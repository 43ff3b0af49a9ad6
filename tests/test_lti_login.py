"""course_grading.lti_login: what an LTI launch must agree with on this server (the whole login,
with a hub and the test as the LMS: tests/hub/test_lms_login.py)."""

from __future__ import annotations

import pytest

from course_grading.lti_login import (
    INSTRUCTOR_ROLE,
    LEARNER_ROLE,
    ROLES_CLAIM,
    SeenNonces,
    launch_refusal,
    lms_role,
    unix_role,
)

# Users and groups every Debian system has: root (group root), daemon (group daemon).
STUDENTS, INSTRUCTORS = "daemon", "root"


def token(*roles: str) -> dict:
    return {ROLES_CLAIM: list(roles)}


@pytest.mark.parametrize("roles, role", [
    ([INSTRUCTOR_ROLE], "instructor"), ([LEARNER_ROLE], "student"),
    ([LEARNER_ROLE, INSTRUCTOR_ROLE], "instructor"),
    (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], None),
    (["Instructor"], None), ([], None),
])
def test_only_the_course_roles_count(roles, role):
    assert lms_role(token(*roles)) == role
    assert lms_role({ROLES_CLAIM: "not a list"}) is None


def test_the_unix_groups_decide_who_is_who():
    assert unix_role("root", STUDENTS, INSTRUCTORS) == "instructor"  # primary group
    assert unix_role("daemon", STUDENTS, INSTRUCTORS) == "student"
    assert unix_role("no-such-user-xyz", STUDENTS, INSTRUCTORS) is None
    assert unix_role("daemon", "no-such-group-xyz", "no-other-group-xyz") is None


def test_a_launch_agrees_with_the_unix_group_or_is_refused_in_one_line():
    assert launch_refusal("daemon", token(LEARNER_ROLE), STUDENTS, INSTRUCTORS) is None
    assert launch_refusal("root", token(INSTRUCTOR_ROLE), STUDENTS, INSTRUCTORS) is None
    said = launch_refusal("daemon", token(INSTRUCTOR_ROLE), STUDENTS, INSTRUCTORS)
    assert said == ("Not logged in: the LMS says 'daemon' is an instructor of this course, "
                    "but on this server 'daemon' is in 'daemon'. Ask the administrator to put "
                    "them in the right Unix group (docs/deploy.md, step 3).")
    said = launch_refusal("root", token(LEARNER_ROLE), STUDENTS, INSTRUCTORS)
    assert said.startswith("Not logged in: the LMS says 'root' is a student of this course")
    said = launch_refusal("no-such-user-xyz", token(LEARNER_ROLE), STUDENTS, INSTRUCTORS)
    assert said.startswith("Not logged in: the LMS sent the user name 'no-such-user-xyz', "
                           "which is not a member of 'daemon' or 'root' on this server.")
    said = launch_refusal("daemon", token(), STUDENTS, INSTRUCTORS)
    assert said.startswith("Not logged in: the LMS gave 'daemon' no course role")
    for line in (launch_refusal(n, token(r), STUDENTS, INSTRUCTORS) for n in ("a\nb", "x\x1b[2J")
                 for r in (LEARNER_ROLE, INSTRUCTOR_ROLE)):
        assert "\n" not in line and "\x1b" not in line


def test_a_nonce_is_taken_once_until_its_token_expires():
    seen = SeenNonces()
    assert seen.first_use("a", expires=100.0, now=0.0)
    assert not seen.first_use("a", expires=100.0, now=99.0)
    assert seen.first_use("b", expires=100.0, now=99.0)
    assert seen.first_use("a", expires=500.0, now=101.0)  # expired: a new token may reuse it
