"""course_grading.exchange: who owns a submission (the whole class runs in tests/hub)."""

from __future__ import annotations

import getpass
import os
import pwd

import pytest

from course_grading.exchange import (
    OwnerCheckedCollect,
    PrivateSubmit,
    foreign_owners,
    symbolic_links,
)


def test_own_files_have_no_foreign_owner(tmp_path):
    (tmp_path / "checkpoint.ipynb").write_text("{}")
    assert foreign_owners(tmp_path, getpass.getuser()) == []


def test_a_student_id_that_is_no_unix_user_is_named(tmp_path):
    assert foreign_owners(tmp_path, "no-such-user-xyz") == ["no Unix user 'no-such-user-xyz'"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_a_file_made_by_someone_else_is_found_deep_inside(tmp_path):
    nobody = pwd.getpwnam("nobody")
    deep = tmp_path / "checkpoint" / "data"
    deep.mkdir(parents=True)
    (deep / "planted.txt").write_text("x")
    os.chown(deep / "planted.txt", nobody.pw_uid, nobody.pw_gid)
    assert foreign_owners(tmp_path, getpass.getuser()) == ["nobody"]


def test_the_classes_plug_into_nbgraders_exchange_factory():
    from nbgrader.exchange.abc import ExchangeCollect, ExchangeSubmit

    assert issubclass(OwnerCheckedCollect, ExchangeCollect)
    assert issubclass(PrivateSubmit, ExchangeSubmit)


def test_symbolic_links_are_found_deep_inside_and_regular_files_are_not(tmp_path):
    deep = tmp_path / "checkpoint" / "data"
    deep.mkdir(parents=True)
    (tmp_path / "checkpoint.ipynb").write_text("{}")
    (deep / "solutions.txt").symlink_to("/srv/course/source/checkpoint/checkpoint.ipynb")
    (tmp_path / "checkpoint" / "up").symlink_to("..")
    assert symbolic_links(tmp_path) == [
        "checkpoint/data/solutions.txt -> /srv/course/source/checkpoint/checkpoint.ipynb",
        "checkpoint/up -> ..",
    ]
    (deep / "solutions.txt").unlink()
    (tmp_path / "checkpoint" / "up").unlink()
    assert symbolic_links(tmp_path) == []
