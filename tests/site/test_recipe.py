"""course_site.recipe and the build's pieces that need no download."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from course_site import recipe
from course_site.build import (
    _Availability,
    _empty_package_needed,
    _open_first_lesson,
    in_file_order,
)
from course_site.lessons import LessonNeeds

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_extra_installs_the_recipes_versions() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["site"]
    assert f"jupyterlite-core=={recipe.JUPYTERLITE_CORE}" in extra
    assert f"jupyterlite-pyodide-kernel=={recipe.PYODIDE_KERNEL}" in extra


def test_every_pin_has_a_full_hash() -> None:
    pins = [recipe.PYODIDE_PACKAGES, recipe.WIDGET_MANAGER, *recipe.KERNEL_WHEELS]
    for pin in pins:
        assert re.fullmatch(r"[0-9a-f]{64}", pin.sha256), pin
    assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", recipe.PYODIDE_NPM.integrity)


def test_lessons_that_cannot_run_in_the_browser_say_why() -> None:
    available = _Availability({"numpy": {"imports": ["numpy"]}}, shipped={"course_lib"})
    assert available.problems(LessonNeeds(frozenset({"numpy", "course_lib", "json"}), ())) == []
    found = available.problems(LessonNeeds(frozenset({"subprocess", "torch"}), ("!ls",)))
    assert found == [
        "`import subprocess`: a browser tab cannot start other programs.",
        "`import torch`: the browser's Python (Pyodide) does not have this package.",
        "`!ls`: shell and package-manager commands do not run in the browser.",
    ]
    assert available.package_of("numpy") == "numpy" and available.package_of("json") is None


def test_a_lesson_importing_what_the_site_empties_says_why() -> None:
    """recipe.EMPTY_PACKAGES: ssl is in the standard library, but the site's is empty."""
    available = _Availability({}, shipped=set())
    assert "ssl" in recipe.EMPTY_PACKAGES and available.has("ssl")
    assert available.problems(LessonNeeds(frozenset({"ssl"}), ())) == [
        "`import ssl`: the kernel cannot open network connections (the site leaves OpenSSL "
        "out)."]


def test_a_package_needing_what_the_site_empties_is_named() -> None:
    """If a package the site needs came to depend on Pyodide's ssl, the build names it."""
    lock = {"packages": {"ssl": {"depends": ["openssl"]}, "openssl": {"depends": []},
                         "urllib3": {"depends": ["ssl"]}, "numpy": {"depends": []}}}
    message = _empty_package_needed(lock, "ssl")
    assert "['urllib3'] depend on Pyodide's 'ssl'" in message
    assert "EMPTY_PACKAGES" in message


def test_the_front_page_opens_the_first_lesson_and_keeps_its_configuration() -> None:
    page = ('<script id="jupyter-config-data" type="application/json">{}</script>\n'
            '<script type="module">await import("./config-utils.js");</script>')
    out = _open_first_lesson(page, "00 contents.ipynb")
    assert 'window.location.replace("./lab/index.html?path=00%20contents.ipynb")' in out
    assert out.index("location.replace") < out.index('<script type="module">')
    assert 'id="jupyter-config-data"' in out


def test_the_font_list_ships_in_one_order_whatever_order_matplotlib_wrote() -> None:
    fonts = [{"fname": f"fonts/ttf/{n}.ttf", "name": n, "style": "normal", "weight": 400,
              "__class__": "FontEntry"} for n in ("DejaVuSans", "STIXGeneral", "cmr10")]
    afm = [{"fname": "fonts/afm/a.afm", "name": "A", "__class__": "FontEntry"},
           {"fname": "fonts/afm/b.afm", "name": "B", "__class__": "FontEntry"}]
    head = {"_version": 330, "default_size": None, "defaultFamily": {"ttf": "DejaVu Sans"}}
    one = json.dumps({**head, "afmlist": afm, "ttflist": fonts}, indent=2)
    other = json.dumps({**head, "afmlist": afm[::-1], "ttflist": [fonts[2], fonts[0], fonts[1]]},
                       indent=2)
    assert in_file_order(one) == in_file_order(other)
    assert json.loads(in_file_order(other)) == {**head, "afmlist": afm, "ttflist": fonts}
    # a list without fonts of one kind (or a future layout) is shipped as it came
    assert json.loads(in_file_order(json.dumps({**head, "ttflist": fonts}))) == {
        **head, "ttflist": fonts}
