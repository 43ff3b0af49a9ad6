"""nbgrader's exchange through ngshare, for servers that share no files (Kubernetes).

Every nbgrader exchange command (release, fetch, submit, list, collect, release and fetch
feedback) as a client of ngshare's REST API (:mod:`course_exchange.ngshare_client`), written
for this course instead of the published ``ngshare-exchange`` (see docs/deploy.md, "Why
not ngshare-exchange"). Set it in the global nbgrader config of every server::

    from course_exchange.ngshare_exchange import configure
    configure(c, "http://127.0.0.1:8000/services/ngshare/")

What it guarantees:

- **Identity comes from the hub.** ngshare files a submission under the owner of the
  JupyterHub token that sent it; ``--student=<someone else>`` is refused outright.
- **A failed submission says so.** ``nbgrader submit`` (and the Assignments tab) raises an
  error when ngshare did not store the submission; nothing is reported as submitted that
  was not.
- **Times are the server's.** A submission's time is the one ngshare recorded when it
  arrived; collect writes it to the collected ``timestamp.txt``.
- **Collect survives any submission.** Paths are checked before anything is written; one
  student's failure is logged and the others are collected; an earlier collected copy is
  replaced only by a complete new one.
- **Nothing is deleted by accident.** Re-releasing (``--force``) or removing an assignment
  that has submissions is refused: ngshare deletes an assignment's submissions with it.
"""

from __future__ import annotations

import getpass
import glob
import os
import shutil
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from nbgrader.exchange import abc
from nbgrader.utils import find_all_notebooks, parse_utc
from traitlets import Bool, Float, Integer, Unicode

from .exchange import PERSONAL, submit_as_other_message
from .inbound import collected_time, format_timestamp, install_collected
from .ngshare_client import (
    Ngshare,
    NgshareError,
    decode_files,
    encode_files,
    entries_of,
    files_json,
    md5_of,
)

__all__ = [
    "NgshareCollect",
    "NgshareExchange",
    "NgshareFetchAssignment",
    "NgshareFetchFeedback",
    "NgshareList",
    "NgshareReleaseAssignment",
    "NgshareReleaseFeedback",
    "NgshareSubmit",
    "configure",
]

_PLUGINS = {
    "exchange": "NgshareExchange", "fetch_assignment": "NgshareFetchAssignment",
    "fetch_feedback": "NgshareFetchFeedback", "release_assignment": "NgshareReleaseAssignment",
    "release_feedback": "NgshareReleaseFeedback", "list": "NgshareList",
    "submit": "NgshareSubmit", "collect": "NgshareCollect",
}


def configure(c: Any, url: str) -> None:
    """Point nbgrader config ``c`` at the ngshare service at ``url`` for every exchange step."""
    for key, name in _PLUGINS.items():
        setattr(c.ExchangeFactory, key, f"{__name__}.{name}")
    c.NgshareExchange.url = url


def _stamp(text: str) -> str:
    """ngshare's timestamp text (with or without ``UTC``) in nbgrader's form."""
    return format_timestamp(parse_utc(text))


def _folder_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in (".", "..") \
            or "\x00" in name:
        raise NgshareError(f"{what} must be a plain name (got {name!r})")
    return name


class NgshareExchange(abc.Exchange):
    """What every step shares: where ngshare is, the caller's token, the local folders."""

    url = Unicode("", help="ngshare's URL, e.g. http://127.0.0.1:8000/services/ngshare/ "
                  "(through JupyterHub's proxy)").tag(config=True)
    timeout = Float(60.0, help="Seconds to wait for one answer from ngshare").tag(config=True)
    retries = Integer(4, help="Further tries of a read when ngshare does not answer").tag(
        config=True)
    cache = Unicode("", help="Where a student's own submissions are remembered (for the "
                    "Assignments list); default <jupyter data dir>/nbgrader_cache").tag(
                        config=True)
    max_files = Integer(1000, help="Refuse to write more files than this for one "
                        "assignment, submission or feedback").tag(config=True)

    def _cache_path(self) -> Path:
        if self.cache:
            return Path(self.cache)
        from jupyter_core.paths import jupyter_data_dir

        return Path(jupyter_data_dir()) / "nbgrader_cache"

    @property
    def client(self) -> Ngshare:
        if not getattr(self, "_client", None):
            if not self.url:
                self.fail("No ngshare URL: set c.NgshareExchange.url in nbgrader_config.py "
                          "(course_exchange.ngshare_exchange.configure)")
            self._client = Ngshare(self.url, os.environ.get("JUPYTERHUB_API_TOKEN", ""),
                                   timeout=self.timeout, retries=self.retries)
        return self._client

    @property
    def me(self) -> str:
        """The caller's JupyterHub name (what ngshare files their submissions under)."""
        return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()

    def _course(self) -> str:
        if not self.coursedir.course_id:
            self.fail("No course id specified. Re-run with --course flag.")
        return self.coursedir.course_id

    def _max_bytes(self) -> int:
        return 1000 * self.coursedir.max_dir_size

    def _ignore(self, directory: str, name: str, size: int) -> bool:
        import fnmatch

        cd = self.coursedir
        if any(fnmatch.fnmatch(name, g) for g in cd.ignore):
            return True
        if cd.include and not any(fnmatch.fnmatch(name, g) for g in cd.include):
            return True
        if cd.max_file_size and size > 1000 * cd.max_file_size:
            self.log.warning("Not sending %s: larger than %d kB (CourseDirectory.max_file_size)",
                             os.path.join(directory, name), cd.max_file_size)
            return True
        return False

    def _local_assignment(self, assignment_id: str) -> Path:
        if self.path_includes_course:
            return Path(self.assignment_dir, self.coursedir.course_id, assignment_id)
        return Path(self.assignment_dir, assignment_id)

    path_includes_course = Bool(False, help="Fetch into ./<course>/<assignment> instead of "
                                "./<assignment>").tag(config=True)

    def init_src(self) -> None:
        pass

    def init_dest(self) -> None:
        pass

    def copy_files(self) -> None:
        pass

    def start(self) -> Any:
        try:
            return super().start()
        except NgshareError as err:  # nbgrader's apps print only "... failed": say why
            self.log.error("%s", err)
            raise


class NgshareReleaseAssignment(NgshareExchange, abc.ExchangeReleaseAssignment):
    """``nbgrader release_assignment``: upload ``release/<assignment>/`` to ngshare."""

    def copy_files(self) -> None:
        course, aid = self._course(), self.coursedir.assignment_id
        src = Path(self.coursedir.format_path(self.coursedir.release_directory, ".", aid))
        if not src.is_dir():
            self.fail(f"Assignment not found: {src} (run generate_assignment first)")
        released = aid in self.client.get(f"assignments/{course}").get("assignments", [])
        if released:
            if not self.force:
                self.fail(f"Assignment {course}/{aid} is already released; use --force to "
                          "replace it")
            subs = self.client.get(f"submissions/{course}/{aid}").get("submissions", [])
            if subs:
                self.fail(f"Refusing to re-release {course}/{aid}: ngshare would delete its "
                          f"{len(subs)} submissions with it. Release it under a new name.")
            self.client.delete(f"assignment/{course}/{aid}")
        files = self.released_files(src)
        self.client.post(f"assignment/{course}/{aid}", files=files_json(files))
        self.log.info("Released %s/%s to ngshare (%d files)", course, aid, len(files))

    def released_files(self, src: Path) -> list[dict[str, Any]]:
        """The files to release (``[{"path", "content"}]``): ``release/<assignment>/``'s.
        A subclass adds each student's own notebooks (``course_grading.personal``)."""
        return encode_files(src, self._ignore, self._max_bytes())


class NgshareFetchAssignment(NgshareExchange, abc.ExchangeFetchAssignment):
    """``nbgrader fetch_assignment``: download the released files into ``./<assignment>``."""

    def copy_files(self) -> None:
        course, aid = self._course(), _folder_name(self.coursedir.assignment_id, "assignment")
        dest = self._local_assignment(aid)
        if dest.exists() and not self.replace_missing_files:
            self.fail(f"You already have a copy of the assignment at {dest}; rename or remove "
                      "it (or use --replace) to fetch it again")
        files = self._own_files(self.client.get(f"assignment/{course}/{aid}").get("files", []))
        dest.parent.mkdir(parents=True, exist_ok=True)
        written = decode_files(files, dest, max_files=self.max_files,
                               max_bytes=self._max_bytes(), only_missing=dest.exists())
        self.log.info("Fetched %s/%s: %d files into %s", course, aid, len(written), dest)

    def _own_files(self, files: list) -> list:
        """The release's files as this student gets them: with per-student notebooks
        (``personal/<student>/<name>``), the caller's own in place of the template's and
        nobody else's; a student with none of their own is told so."""
        personal = [f for f in files if isinstance(f, dict)
                    and str(f.get("path", "")).split("/")[0] == PERSONAL]
        if not personal:
            return files
        prefix = f"{PERSONAL}/{self.me}/"
        own = {str(f["path"])[len(prefix):]: f for f in personal
               if str(f["path"]).startswith(prefix) and "/" not in str(f["path"])[len(prefix):]}
        if not own:
            self.fail(f"{self.coursedir.assignment_id} was released with a notebook of their "
                      f"own to each student, and there is none for {self.me!r}: ask your "
                      "instructor to add you to the class and release it again")
        shared = [f for f in files if f not in personal and f.get("path") not in own]
        return shared + [{**f, "path": name} for name, f in sorted(own.items())]


class NgshareSubmit(NgshareExchange, abc.ExchangeSubmit):
    """``nbgrader submit``: upload ``./<assignment>`` as the token's owner; fail loudly."""

    def copy_files(self) -> None:
        course, aid = self._course(), self.coursedir.assignment_id
        if self.coursedir.student_id not in ("", "*", self.me):
            self.fail(submit_as_other_message(
                self.coursedir.student_id, self.me,
                "ngshare files every submission under the JupyterHub user who sends it"))
        src = self._local_assignment(aid)
        if not src.is_dir():
            self.fail(f"Assignment not found: {src.resolve()} (fetch it first)")
        files = encode_files(src, self._ignore, self._max_bytes())
        try:
            self._check_notebooks(course, aid, src)
            answer = self.client.post(f"submission/{course}/{aid}", files=files_json(files))
        except NgshareError as err:
            self.fail(f"Your submission of {aid} was NOT stored: {err}")
        stamp = _stamp(answer["timestamp"])
        # Remembered locally for the Assignments list (status "submitted", feedback).
        cache = self._cache_path() / course / f"{self.me}+{aid}+{stamp}"
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
        # the student's own files, just sent: the cache holds exactly them and their folders
        decode_files(files, cache, max_files=entries_of(files),
                     max_bytes=self._max_bytes() + 1)
        (cache / "timestamp.txt").write_text(stamp)
        self.log.info("Submitted as: %s %s %s", course, aid, stamp)

    def _check_notebooks(self, course: str, aid: str, src: Path) -> None:
        listed = self.client.get(f"assignment/{course}/{aid}", list_only="true")
        released = {f["path"] for f in listed.get("files", []) if f["path"].endswith(".ipynb")
                    and f["path"].split("/")[0] != PERSONAL}
        mine = set(find_all_notebooks(str(src)))
        missing, extra = sorted(released - mine), sorted(mine - released)
        if missing and self.strict:
            self.fail(f"Assignment {aid} not submitted: notebooks missing: {', '.join(missing)}")
        if missing or extra:
            self.log.warning("Submitting %s with notebooks missing (%s) or extra (%s)", aid,
                             ", ".join(missing) or "none", ", ".join(extra) or "none")


class NgshareCollect(NgshareExchange, abc.ExchangeCollect):
    """``nbgrader collect``: each student's newest submission, with ngshare's time."""

    def copy_files(self) -> None:
        course, aid = self._course(), self.coursedir.assignment_id
        subs = self.client.get(f"submissions/{course}/{aid}").get("submissions", [])
        wanted = self.coursedir.student_id
        by_student: dict[str, list[str]] = defaultdict(list)
        for sub in subs:
            if wanted in ("", "*") or sub.get("student_id") == wanted:
                by_student[sub["student_id"]].append(sub["timestamp"])
        duedate = self._duedate() if self.before_duedate else None
        failed = []
        for student, stamps in sorted(by_student.items()):
            stamps.sort(key=parse_utc, reverse=True)
            if duedate is not None:
                stamps.sort(key=lambda s: parse_utc(s) > duedate)
            try:
                self._collect(course, aid, _folder_name(student, "a student id"), stamps[0])
            except Exception as err:  # one student's submission never stops the others
                failed.append(student)
                self.log.error("Could not collect %r's submission of %s: %s: %s. Their earlier "
                               "collected copy, if any, is unchanged", student, aid,
                               type(err).__name__, err)
        if not by_student:
            self.log.warning("No submissions of '%s' for course '%s' to collect", aid, course)
        if failed:
            self.log.error("Collected %d of %d submissions; not collected: %s",
                           len(by_student) - len(failed), len(by_student), ", ".join(failed))

    def _duedate(self) -> datetime | None:
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def _collect(self, course: str, aid: str, student: str, stamp: str) -> None:
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, aid))
        if dest.is_dir():
            existing = collected_time(dest)
            if existing is not None and not (self.update and parse_utc(stamp) > existing) \
                    and not (self.before_duedate and parse_utc(stamp) != existing):
                self.log.info("%s: %s %s", "No newer submission to collect" if self.update
                              else "Submission already exists, use --update to update",
                              student, aid)
                return
        answer = self.client.get(f"submission/{course}/{aid}/{student}", timestamp=stamp)
        fresh = dest.with_name(f".{dest.name}.new-{os.getpid()}")
        shutil.rmtree(fresh, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        # the submission's own timestamp.txt (or a folder of that name) gives way to ngshare's
        files = [f for f in answer.get("files", []) if not isinstance(f, dict)
                 or str(f.get("path", "")).split("/")[0] != "timestamp.txt"]
        try:
            decode_files(files, fresh, max_files=self.max_files, max_bytes=self._max_bytes())
            (fresh / "timestamp.txt").write_text(_stamp(answer["timestamp"]))
            install_collected(fresh, dest, self.log, student, aid)
        finally:  # a copy that was not installed is not left beside the collected one
            shutil.rmtree(fresh, ignore_errors=True)



class NgshareReleaseFeedback(NgshareExchange, abc.ExchangeReleaseFeedback):
    """``nbgrader release_feedback``: each student's feedback, on the submission it grades."""

    def feedback_folders(self) -> list[tuple[str, Path]]:
        """(student id, folder) of every feedback this release sends, in name order."""
        cd = self.coursedir
        pattern = cd.format_path(cd.feedback_directory, cd.student_id or "*", cd.assignment_id)
        exclude = set(filter(None, cd.student_id_exclude.split(",")))
        return [(folder.parent.name, folder) for folder in sorted(map(Path, glob.glob(pattern)))
                if folder.parent.name not in exclude and any(folder.glob("*.html"))]

    def copy_files(self) -> None:
        course, aid = self._course(), self.coursedir.assignment_id
        for sid, folder in self.feedback_folders():
            stamp_file = folder / "timestamp.txt"
            if not stamp_file.exists():
                stamp_file = Path(self.coursedir.format_path(
                    self.coursedir.submitted_directory, sid, aid)) / "timestamp.txt"
            stamp = _stamp(stamp_file.read_text().strip())
            files = encode_files(folder, lambda d, n, s: not n.endswith(".html"))
            self.client.post(f"feedback/{course}/{aid}/{sid}", timestamp=stamp,
                             files=files_json(files))
            self.log.info("Released feedback for %s %s (submitted %s)", sid, aid, stamp)


class NgshareFetchFeedback(NgshareExchange, abc.ExchangeFetchFeedback):
    """``nbgrader fetch_feedback``: the caller's own feedback, one folder per submission."""

    def copy_files(self) -> None:
        course, aid = self._course(), self.coursedir.assignment_id
        subs = self.client.get(f"submissions/{course}/{aid}/{self.me}").get("submissions", [])
        got = 0
        for sub in subs:
            stamp = _stamp(sub["timestamp"])
            answer = self.client.get(f"feedback/{course}/{aid}/{self.me}", timestamp=stamp)
            files = answer.get("files", [])
            if not files:
                continue
            dest = self._local_assignment(aid) / "feedback" / stamp
            if dest.exists():
                shutil.rmtree(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            decode_files(files, dest, max_files=self.max_files, max_bytes=self._max_bytes())
            got += 1
        if not got:
            self.log.warning("No feedback available for %s yet", aid)
        else:
            self.log.info("Fetched feedback of %d submission(s) of %s", got, aid)


class NgshareList(NgshareExchange, abc.ExchangeList):
    """``nbgrader list`` and the Assignments tab: released, fetched and submitted."""

    def list_files(self) -> list[dict]:
        if self.inbound:
            return self._inbound()
        if self.cached:
            return self._submitted()
        return self._released()

    def remove_files(self) -> list[dict]:
        course = self._course()
        removed = self._released()
        for info in removed:
            aid = info["assignment_id"]
            subs = self.client.get(f"submissions/{course}/{aid}").get("submissions", [])
            if subs:
                self.fail(f"Refusing to remove {course}/{aid}: ngshare would delete its "
                          f"{len(subs)} submissions with it")
            self.client.delete(f"assignment/{course}/{aid}")
            info["status"] = "removed"
        return removed

    def _assignment_ids(self, course: str) -> list[str]:
        ids = self.client.get(f"assignments/{course}").get("assignments", [])
        wanted = self.coursedir.assignment_id
        return sorted(a for a in ids if wanted in ("", "*", a))

    def _released(self) -> list[dict]:
        course = self._course()
        out = []
        for aid in self._assignment_ids(course):
            local = self._local_assignment(aid)
            info = {"course_id": course, "assignment_id": aid}
            if local.is_dir():
                info.update(status="fetched", path=str(local.resolve()))
                notebooks = sorted(local.glob("*.ipynb"))
            else:
                listed = self.client.get(f"assignment/{course}/{aid}", list_only="true")
                info.update(status="released", path=f"ngshare:{course}/{aid}")
                notebooks = sorted(Path(f["path"]) for f in listed.get("files", [])
                                   if f["path"].endswith(".ipynb") and "/" not in f["path"])
            info["notebooks"] = [{"notebook_id": nb.stem, "path": str(nb)} for nb in notebooks]
            out.append(info)
            self.log.info("%s %s%s", course, aid,
                          " (already downloaded)" if info["status"] == "fetched" else "")
        return out

    def _submitted(self) -> list[dict]:
        course = self._course()
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for folder in sorted((self._cache_path() / course).glob(f"{self.me}+*+*")):
            student, aid, stamp = folder.name.rsplit("+", 2)
            if self.coursedir.assignment_id not in ("", "*", aid):
                continue
            groups[(course, student, aid)].append(self._submission(course, aid, stamp, folder))
        return [{"course_id": c, "student_id": s, "assignment_id": a, "status": "submitted",
                 "submissions": sorted(subs, key=lambda x: x["timestamp"])}
                for (c, s, a), subs in sorted(groups.items())]

    def _submission(self, course: str, aid: str, stamp: str, folder: Path) -> dict:
        try:
            remote = self.client.get(f"feedback/{course}/{aid}/{self.me}", timestamp=stamp,
                                     list_only="true").get("files", [])
        except NgshareError as err:
            self.log.warning("Could not ask for feedback on %s (%s): %s", aid, stamp, err)
            remote = []
        checksums = {f["path"]: f.get("checksum") for f in remote}
        feedback_dir = self._local_assignment(aid) / "feedback" / stamp
        notebooks = []
        for nb in sorted(folder.glob("*.ipynb")):
            local = feedback_dir / f"{nb.stem}.html"
            has_local = local.is_file()
            has_remote = f"{nb.stem}.html" in checksums
            notebooks.append({
                "notebook_id": nb.stem, "path": str(nb),
                "has_local_feedback": has_local, "has_exchange_feedback": has_remote,
                "local_feedback_path": str(local) if has_local else None,
                "feedback_updated": has_local and has_remote
                and md5_of(local) != checksums[f"{nb.stem}.html"],
            })
        every = bool(notebooks)
        info = {
            "course_id": course, "student_id": self.me, "assignment_id": aid,
            "timestamp": stamp, "status": "submitted", "path": str(folder),
            "notebooks": notebooks,
            "has_local_feedback": every and all(n["has_local_feedback"] for n in notebooks),
            "has_exchange_feedback": every and all(n["has_exchange_feedback"]
                                                   for n in notebooks),
            "feedback_updated": any(n["feedback_updated"] for n in notebooks),
        }
        info["local_feedback_path"] = str(feedback_dir) if info["has_local_feedback"] else None
        return info

    def _inbound(self) -> list[dict]:
        course = self._course()
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for aid in self._assignment_ids(course):
            for sub in self.client.get(f"submissions/{course}/{aid}").get("submissions", []):
                groups[(course, sub["student_id"], aid)].append({
                    "course_id": course, "student_id": sub["student_id"], "assignment_id": aid,
                    "timestamp": _stamp(sub["timestamp"]), "status": "submitted",
                    "path": f"ngshare:{course}/{aid}/{sub['student_id']}", "notebooks": []})
        return [{"course_id": c, "student_id": s, "assignment_id": a, "status": "submitted",
                 "submissions": sorted(subs, key=lambda x: x["timestamp"])}
                for (c, s, a), subs in sorted(groups.items())]
