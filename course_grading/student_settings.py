"""The settings students' Jupyter servers obey on a JupyterHub class: installed, then checked.

Students' servers run with ``deploy/student-jupyter-config`` on their ``JUPYTER_CONFIG_PATH``
(formgrader and the course list switched off). Jupyter *silently skips* a config folder it
cannot read, so if a student cannot reach those files (the checkout lies under a private
0700 folder, a mode was lost in a copy) their server starts with formgrader switched back on
and nobody is told. This module makes that fail closed:

- :func:`install_settings` copies the shipped folder, as root, to a place every user can
  read (root-owned, 0755 folders, 0644 files) after checking that no one but root can
  change that place or any folder above it;
- :func:`unread_settings` runs a small reader *as the student* (their uid, gid and groups,
  as the spawner will start their server) that opens and parses every settings file and
  returns its hash; anything it could not read, or read differently from what was
  installed, is a problem;
- :class:`SettingsUnreadable` is what the hub's spawn hook raises then: the student's server
  is not started, and the message says why and what to do.

A student can still put their own settings in ``~/.jupyter`` (it comes first on Jupyter's
path). That only changes their own server: the gradebook, the quiz's source and the
submissions stay out of their reach (the instructor's 0700 home, the exchange's modes).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import pwd
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "SettingsUnreadable",
    "install_settings",
    "settings_digests",
    "unread_settings",
    "unsafe_folders",
]

# Run by the student's uid with nothing but the standard library (python -I -S), so that
# it reads the files exactly as far as that user can. Prints {relative path: sha256}.
_READER = r"""
import hashlib, json, os, sys
root = sys.argv[1]
def fail(err):
    raise err
out = {}
for top, dirs, files in os.walk(root, onerror=fail):
    for name in files:
        path = os.path.join(top, name)
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(".json"):
            json.loads(data)
        out[os.path.relpath(path, root)] = hashlib.sha256(data).hexdigest()
print(json.dumps(out, sort_keys=True))
"""


class SettingsUnreadable(RuntimeError):
    """A student's server must not start: they cannot read the settings students obey.

    ``jupyterhub_message`` is what JupyterHub shows the student on the spawn page.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.jupyterhub_message = message


def settings_digests(folder: str | os.PathLike[str]) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``folder``, as the caller reads them.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "a.json").write_text("{}")
    ...     settings_digests(d)
    {'a.json': '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'}
    """
    root = Path(folder)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def unsafe_folders(path: str | os.PathLike[str]) -> list[str]:
    """``path`` and the folders above it that someone other than root could change.

    A folder is safe when root owns it and neither its group nor others may write to it,
    or when it is sticky (like ``/tmp``: others may add entries but not replace root's).
    Paths that do not exist yet are skipped (they will be made by root).

    Examples
    --------
    >>> unsafe_folders("/")
    []
    """
    bad = []
    p = Path(os.path.abspath(path))
    for folder in [p, *p.parents]:
        try:
            st = folder.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            bad.append(f"{folder} is a symbolic link")
        elif st.st_uid != 0:
            bad.append(f"{folder} is owned by uid {st.st_uid}, not root")
        elif st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            bad.append(f"{folder} is writable by others (mode {oct(stat.S_IMODE(st.st_mode))})")
    return bad


def install_settings(source: str | os.PathLike[str],
                     target: str | os.PathLike[str]) -> dict[str, str]:
    """Copy the settings folder ``source`` to ``target``, readable by everyone; return digests.

    Needs root. ``target`` is replaced whole (folders 0755, files 0644, owned by root).

    Raises
    ------
    PermissionError
        When someone other than root could change ``target`` or a folder above it: a
        student could then swap the settings for their own.
    FileNotFoundError
        When ``source`` is not a folder.
    """
    source, target = Path(source), Path(os.path.abspath(target))
    if not source.is_dir():
        raise FileNotFoundError(f"the students' settings must be a folder (got {source})")
    bad = unsafe_folders(target)
    if bad:
        raise PermissionError(
            f"the students' settings cannot be installed in {target}: " + "; ".join(bad)
            + " (expected folders only root can change)")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    fresh = target.with_name(f".{target.name}.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(source, fresh, symlinks=False)
    for top, _dirs, files in os.walk(fresh):
        os.chown(top, 0, 0)
        os.chmod(top, 0o755)
        for name in files:
            os.chown(os.path.join(top, name), 0, 0)
            os.chmod(os.path.join(top, name), 0o644)
    if target.exists():
        shutil.rmtree(target)
    fresh.rename(target)
    return settings_digests(target)


def _as_user(name: str) -> Callable[[], None]:
    """A ``preexec_fn`` that becomes Unix user ``name`` (uid, gid, groups), as a spawner does."""
    user = pwd.getpwnam(name)
    groups = os.getgrouplist(name, user.pw_gid)

    def become() -> None:
        os.setgid(user.pw_gid)
        os.setgroups(groups)
        os.setuid(user.pw_uid)

    return become


async def unread_settings(user: str, folder: str | os.PathLike[str],
                          expected: dict[str, str], python: str = sys.executable,
                          timeout: float = 30) -> list[str]:
    """What Unix user ``user`` fails to read in ``folder``, compared with ``expected``.

    Runs ``python -I -S`` as that user (needs root) to open and parse every file there.

    Parameters
    ----------
    user : str
        The student's Unix name.
    folder : path-like
        The installed settings (what the student's ``JUPYTER_CONFIG_PATH`` names).
    expected : dict
        ``{relative path: sha256}`` of what was installed (:func:`install_settings`).
    python : str
        An interpreter the user can run (the class's environment's).

    Returns
    -------
    list of str
        Empty when the user reads exactly ``expected``; otherwise one line per problem.
    """
    proc = await asyncio.create_subprocess_exec(
        python, "-I", "-S", "-c", _READER, os.fspath(folder),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=_as_user(user), cwd="/", env={"LANG": "C.UTF-8"},
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return [f"reading {folder} as {user} took more than {timeout} s"]
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        return [lines[-1] if lines else f"the reader exited with {proc.returncode}"]
    try:
        seen = json.loads(out)
    except ValueError:
        return [f"the reader printed no digests (got {out[:200]!r})"]
    problems = [f"{name} was not found" for name in sorted(set(expected) - set(seen))]
    problems += [f"{name} differs from what was installed" for name in sorted(expected)
                 if name in seen and seen[name] != expected[name]]
    problems += [f"{name} was not installed by the hub"
                 for name in sorted(set(seen) - set(expected))]
    return problems
