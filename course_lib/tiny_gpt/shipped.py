"""The trained weights the course ships, and how a training run is written and read back.

``python -m course_lib.tiny_gpt train --out DIR`` writes two files into ``DIR``:
``induction.npz`` (the parameters, float64, one array each, no pickles) and
``induction.json`` beside it: the command, the recipe and seed, the versions of Python and
numpy and the BLAS, the CPU and wall time, the held-out accuracy reached, the training
curve, and the npz file's size and sha256. :func:`load_model` refuses an npz whose sha256
is not the one its JSON records, so a truncated or edited file is never read as weights.

The course ships the files of that command in ``course_lib/tiny_gpt/data/``; lesson 16
loads them.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import zipfile
from dataclasses import asdict, dataclass
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AttentionInputError
from .model import PARAMETERS, TinyGPT
from .task import SEGMENT_MAX, SEGMENT_MIN, SEQ_LEN, VOCAB_SIZE
from .training import EVAL_SEED, TrainingRun

__all__ = ["DATA_FILE", "PROVENANCE_FILE", "Loaded", "load_model", "write_run"]

#: the two files a run writes, and the course ships in ``course_lib/tiny_gpt/data/``
DATA_FILE = "induction.npz"
PROVENANCE_FILE = "induction.json"
_SHIPPED = "course_lib/tiny_gpt/data"


@dataclass(frozen=True)
class Loaded:
    """A trained model and what its JSON says about it.

    Attributes
    ----------
    model : TinyGPT
    provenance : dict
        The JSON written beside the weights (see the module's docstring).
    """

    model: TinyGPT
    provenance: dict[str, Any]

    @property
    def command(self) -> str:
        """The command that trained it."""
        return str(self.provenance["command"])

    @property
    def curve(self) -> dict[str, list[float]]:
        """``steps``, ``loss`` (mean over the steps since the previous point) and
        ``held_out_accuracy``, as training measured them."""
        return self.provenance["curve"]

    def __repr__(self) -> str:
        p = self.provenance
        return (f"{self.model!r}\ntrained by `{self.command}` in {p['cpu_seconds']:.0f} s of "
                f"CPU time; held-out accuracy {p['held_out']['accuracy']:.1%} on "
                f"{p['held_out']['sequences']} sequences; {p['data_bytes'] / 1000:.0f} kB")


def _npz_bytes(model: TinyGPT) -> bytes:
    """The parameters as an npz file, byte for byte the same for the same numbers."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in PARAMETERS:
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(info, "w") as f:
                np.lib.format.write_array(f, np.ascontiguousarray(getattr(model, name)),
                                          allow_pickle=False)
    return buffer.getvalue()


def _blas() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{deps.get('name', '?')} {deps.get('version', '?')}"
    except Exception:  # numpy's build information is optional; say so, never fail on it
        return "unknown"


def write_run(run: TrainingRun, out: str | Path, *, command: str, held_out_sequences: int,
              held_out_accuracy: float, scored_positions: int) -> dict[str, Any]:
    """Write ``induction.npz`` and ``induction.json`` for ``run`` into the folder ``out``.

    Returns
    -------
    dict
        The provenance written to the JSON.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    raw = _npz_bytes(run.model)
    c = run.config
    every = c.eval_every
    means = [float(run.losses[max(0, s - every):s].mean()) for s in run.eval_steps[1:]]
    provenance = {
        "what": "a two-layer attention-only transformer (course_lib.tiny_gpt) trained on "
                "sequences with a repeated segment",
        "command": command,
        "config": asdict(c),
        "model": {"d_model": run.model.d_model, "heads": run.model.heads,
                  "layers": run.model.layers, "vocab": run.model.vocab,
                  "max_len": run.model.max_len, "parameters": run.model.size()},
        "task": {"seq_len": SEQ_LEN, "segment_lengths": [SEGMENT_MIN, SEGMENT_MAX],
                 "vocab": VOCAB_SIZE},
        "held_out": {"seed": EVAL_SEED, "sequences": held_out_sequences,
                     "scored_positions": scored_positions,
                     "accuracy": round(held_out_accuracy, 6)},
        "curve": {"steps": list(run.eval_steps[1:]),
                  "loss": [round(v, 5) for v in means],
                  "held_out_accuracy": [round(v, 5) for v in run.eval_accuracy[1:]],
                  "start_accuracy": round(run.eval_accuracy[0], 5)},
        "cpu_seconds": round(run.cpu_seconds, 1),
        "wall_seconds": round(run.wall_seconds, 1),
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "blas": _blas()},
        "trained_on": date.today().isoformat(),
        "data_file": DATA_FILE,
        "data_bytes": len(raw),
        "data_sha256": hashlib.sha256(raw).hexdigest(),
    }
    (folder / DATA_FILE).write_bytes(raw)
    (folder / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1) + "\n",
                                          encoding="utf-8")
    return provenance


def _fail(where: str, message: str) -> AttentionInputError:
    return AttentionInputError(
        f"{message}. Reinstall the course for the shipped weights ({_SHIPPED}), or train "
        f"your own with `python -m course_lib.tiny_gpt train --out DIR` and load "
        f"DIR/{DATA_FILE} (read from {where})")


def _read(folder: Path | None, name: str) -> bytes:
    try:
        if folder is None:
            return resources.files("course_lib.tiny_gpt").joinpath("data", name).read_bytes()
        return (folder / name).read_bytes()
    except OSError as exc:
        where = _SHIPPED if folder is None else str(folder)
        raise _fail(where, f"{name} is missing ({type(exc).__name__})") from None


def _load(folder: Path | None) -> Loaded:
    where = _SHIPPED if folder is None else str(folder)
    text = _read(folder, PROVENANCE_FILE)
    try:
        provenance = json.loads(text.decode("utf-8"))
        recorded = str(provenance["data_sha256"])
        heads = int(provenance["model"]["heads"])
    except (ValueError, KeyError, TypeError) as exc:
        raise _fail(where, f"{PROVENANCE_FILE} is not the JSON a training run writes "
                           f"({type(exc).__name__}: {exc})") from None
    raw = _read(folder, DATA_FILE)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != recorded:
        raise _fail(where, f"{DATA_FILE} is corrupt: its sha256 is {digest[:16]}… but "
                           f"{PROVENANCE_FILE} records {recorded[:16]}…")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in PARAMETERS}
        model = TinyGPT(**arrays, heads=heads)
    except (ValueError, OSError, KeyError, zipfile.BadZipFile, AttentionInputError) as exc:
        raise _fail(where, f"{DATA_FILE} does not hold the model's parameters ({exc})"
                    ) from None
    for a in arrays.values():
        a.flags.writeable = False
    return Loaded(model, provenance)


@lru_cache(maxsize=1)
def _shipped() -> Loaded:
    return _load(None)


def load_model(folder: str | Path | None = None) -> Loaded:
    """The trained model: the shipped one, or the one a training run wrote into ``folder``.

    Parameters
    ----------
    folder : str or Path, optional
        Where ``python -m course_lib.tiny_gpt train --out folder`` wrote its two files;
        the shipped weights by default (loaded once, then the same object).

    Returns
    -------
    Loaded

    Raises
    ------
    AttentionInputError
        If a file is missing or unreadable, or the npz's sha256 is not the recorded one;
        the message names the file and what to do.

    Examples
    --------
    >>> loaded = load_model()
    >>> loaded.model.layers, loaded.model.heads
    (2, 2)
    """
    return _shipped() if folder is None else _load(Path(folder))
