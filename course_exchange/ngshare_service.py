"""ngshare as a JupyterHub service on one machine, and the course's place in it.

Two commands:

``python -m course_exchange.ngshare_service serve``
    Runs ngshare 0.6.0 (the package from PyPI, unchanged) the way JupyterHub starts a
    managed service, with three differences from ngshare's own ``main``: it listens on the
    host of ``JUPYTERHUB_SERVICE_URL`` (ngshare's own listens on every interface), never
    reloads itself when a file changes, and takes the database URL from the environment
    variable ``NGSHARE_DATABASE_URL`` (a password on the command line is visible to every
    user in ``ps``). The database schema is brought up to date first, as ngshare does, with
    one fix that PostgreSQL needs (:func:`prepare_database`), and one that SQLAlchemy 2
    needs (:func:`adopt_new_rows`: without it ngshare 0.6.0 answers "success" and stores
    no release and no submission); and it asks the hub who owns a token once a minute
    instead of on every request (:func:`remember_tokens`).

``python -m course_exchange.ngshare_service setup-course COURSE --instructor I --student S...``
    As an ngshare admin (with that admin's JupyterHub token in ``JUPYTERHUB_API_TOKEN``):
    creates the course with its instructors and enrols the students. Running it again adds
    students and leaves the rest as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import namedtuple
from typing import Any
from urllib.parse import urlparse

__all__ = ["adopt_new_rows", "main", "prepare_database", "remember_tokens", "serve",
           "setup_course"]


def serve(storage: str, admins: list[str]) -> None:
    """Run ngshare until it is stopped; JupyterHub's ``JUPYTERHUB_*`` variables must be set."""
    from ngshare.ngshare import MyApplication
    from tornado.httpserver import HTTPServer
    from tornado.ioloop import IOLoop

    db_url = os.environ.get("NGSHARE_DATABASE_URL", "")
    if not db_url:
        raise SystemExit("ngshare_service: NGSHARE_DATABASE_URL must name ngshare's database "
                         "(e.g. postgresql+psycopg2://ngshare:...@127.0.0.1/ngshare)")
    service_url = urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/ngshare/")
    adopt_new_rows()
    remember_tokens(TOKEN_CACHE_SECONDS)
    prepare_database(db_url, storage)
    app = MyApplication(prefix, db_url, storage, admin=admins, debug=False, autoreload=False)
    HTTPServer(app).listen(service_url.port, service_url.hostname)
    print(f"ngshare listening on {service_url.hostname}:{service_url.port}{prefix}",
          flush=True)
    IOLoop.current().start()


def adopt_new_rows() -> None:
    """Make ngshare 0.6.0 store its new assignments and submissions under SQLAlchemy 2.

    ngshare creates an ``Assignment(id, course)`` or a ``Submission(student, assignment)``
    and commits, relying on SQLAlchemy 1.x's backref cascade to put the new row in the
    session of the course it was attached to. SQLAlchemy 2 removed that cascade: the commit
    stores nothing, and ngshare still answers ``success`` (a release, every submission,
    silently lost). This adds the new object to its parent's session when the parent is
    attached, as 1.x did. Harmless under 1.x.
    """
    from ngshare.database import database
    from sqlalchemy import event
    from sqlalchemy.orm import configure_mappers, object_session

    if getattr(adopt_new_rows, "done", False):
        return
    configure_mappers()  # the backrefs (Assignment.course) exist from here on

    def adopt(target: object, value: object, _old: object, _initiator: object) -> None:
        session = object_session(value) if value is not None else None
        if session is not None and target not in session:
            session.add(target)

    for attribute in (database.Assignment.course, database.Submission.assignment,
                      database.Submission.student):
        event.listen(attribute, "set", adopt)
    adopt_new_rows.done = True  # type: ignore[attr-defined]


# How long a token's owner is remembered (JupyterHub's own HubAuth keeps them 300 s).
TOKEN_CACHE_SECONDS = 60.0


def remember_tokens(max_age: float) -> None:
    """Ask the hub who owns a token once per ``max_age`` seconds, over one kept connection.

    ngshare 0.6.0 asks the hub (``/hub/api/user``) on every request, with a new connection
    each time and blocking its only thread meanwhile: half its time under load. A token the
    hub accepted is remembered for ``max_age`` seconds (so a revoked token keeps working
    that long here); a refused one is asked about again every time.
    """
    import hashlib
    import time

    import requests
    from ngshare.ngshare import MyRequestHandler

    if getattr(remember_tokens, "done", False):
        return
    session = requests.Session()  # one connection to the hub, kept alive
    known: dict[str, tuple[float, dict]] = {}

    def user_for_token(self: Any, token: str) -> dict | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        hit = known.get(key)
        if hit is not None and now - hit[0] < max_age:
            return hit[1]
        r = session.get(self.settings["user_url"], headers={"Authorization": f"token {token}"},
                        timeout=30)
        if not r.ok:
            known.pop(key, None)
            return None
        if len(known) > 100_000:  # a bound, whatever the number of users
            known.clear()
        known[key] = (now, r.json())
        return known[key][1]

    MyRequestHandler.user_for_token = user_for_token
    remember_tokens.done = True  # type: ignore[attr-defined]


# ngshare 0.6.0 declares the first column of its three file tables as TEXT, a foreign key to
# an INTEGER id: SQLite does not check, PostgreSQL refuses to create the table
# ("foreign key constraint ... cannot be implemented").
_FILE_TABLES = ("assignment_files_assoc_table", "submission_files_assoc_table",
                "feedback_files_assoc_table")


def prepare_database(db_url: str, storage: str) -> None:
    """Bring ngshare's schema up to date; on PostgreSQL, with the file tables' ids fixed.

    SQLite: ngshare's own migrations. PostgreSQL: a new database gets the tables from
    ngshare's models, with ``left_id`` as INTEGER, and is marked as at ngshare's newest
    migration; a database made so before is upgraded by ngshare's migrations (none newer
    exist in 0.6.0).
    """
    from ngshare import dbutil
    from ngshare.database import database
    from sqlalchemy import INTEGER, create_engine, inspect
    from sqlalchemy.engine import make_url

    options = namedtuple("CmdOpts", ["x"])(["data=true", "storage=" + storage])
    if make_url(db_url).get_backend_name() != "postgresql":
        dbutil.upgrade(db_url, cmd_opts=options)
        return
    for name in _FILE_TABLES:
        getattr(database, name).c.left_id.type = INTEGER()
    engine = create_engine(db_url)
    try:
        fresh = "alembic_version" not in inspect(engine).get_table_names()
        if fresh:
            database.Base.metadata.create_all(engine)
    finally:
        engine.dispose()
    if fresh:
        import alembic.command

        alembic.command.stamp(dbutil.get_alembic_config(db_url, options), "head")
    else:
        dbutil.upgrade(db_url, cmd_opts=options)


def setup_course(client: Any, course: str, instructors: list[str],
                 students: list[str]) -> list[str]:
    """Create ``course`` (if new) with ``instructors``; enrol ``students``; return messages."""
    done = []
    known = client.get("courses").get("courses", [])
    if course not in known:
        client.post(f"course/{course}", instructors=json.dumps(instructors))
        done.append(f"created course {course} with instructors {', '.join(instructors)}")
    if students:
        entries = [{"username": s, "first_name": "", "last_name": "", "email": ""}
                   for s in students]
        status = client.post(f"students/{course}", students=json.dumps(entries))["status"]
        refused = [f"{s['username']}: {s.get('message')}" for s in status if not s["success"]]
        if refused:
            from .ngshare_client import NgshareError

            raise NgshareError(f"ngshare did not enrol {'; '.join(refused)}")
        done.append(f"enrolled {len(students)} students in {course}")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_exchange.ngshare_service",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="run ngshare as a JupyterHub service")
    run.add_argument("--storage", required=True, help="folder for the stored files")
    run.add_argument("--admins", default="", help="ngshare admins (JupyterHub names, comma "
                     "separated)")
    setup = sub.add_parser("setup-course", help="create a course and enrol its students")
    setup.add_argument("course")
    setup.add_argument("--url", required=True, help="ngshare's URL")
    setup.add_argument("--instructor", action="append", required=True)
    setup.add_argument("--student", action="append", default=[])
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.storage, [a for a in args.admins.split(",") if a])
        return 0
    # the client side only: the service itself runs without nbgrader (serve)
    from .ngshare_client import Ngshare, NgshareError

    client = Ngshare(args.url, os.environ.get("JUPYTERHUB_API_TOKEN", ""))
    try:
        for line in setup_course(client, args.course, args.instructor, args.student):
            print(line)
    except NgshareError as err:
        print(f"ngshare_service: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
