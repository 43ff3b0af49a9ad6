"""The shipped weights and the training command: what the JSON states holds, the files are
checked, and `python -m course_lib.tiny_gpt train --smoke` writes weights that load."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib import AttentionInputError
from course_lib.tiny_gpt import __main__ as command
from course_lib.tiny_gpt import accuracy, forward, held_out, load_model
from course_lib.tiny_gpt.shipped import DATA_FILE, PROVENANCE_FILE

DATA = Path(__file__).resolve().parents[2] / "course_lib" / "tiny_gpt" / "data"


def test_the_shipped_weights_reproduce_the_accuracy_their_json_states():
    """99.8 % on 2000 held-out sequences, as `python -m course_lib.tiny_gpt train` printed.
    Another BLAS may round a logit's last bit otherwise; no prediction here is that close to
    a tie (the best letter beats the second by more than 1e-6 everywhere)."""
    loaded = load_model()
    stated = loaded.provenance["held_out"]
    batch = held_out(stated["sequences"])
    assert int(batch.scored.sum()) == stated["scored_positions"]
    measured = accuracy(loaded.model, batch)
    assert measured == pytest.approx(stated["accuracy"], abs=1e-6)
    top2 = np.sort(forward(loaded.model, batch.tokens).logits[batch.scored], axis=-1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] > 1e-6).all()
    assert f"{measured:.1%}" == f"{stated['accuracy']:.1%}" == "99.8%"
    assert stated["accuracy"] > 20 / 26, "well above chance (1/26)"


def test_the_json_says_how_the_weights_were_made_and_the_npz_is_small():
    p = load_model().provenance
    assert p["command"] == "python -m course_lib.tiny_gpt train --out course_lib/tiny_gpt/data"
    assert p["config"]["seed"] == 0 and p["config"]["steps"] == 1500
    assert {"python", "numpy", "blas"} <= set(p["versions"])
    raw = (DATA / DATA_FILE).read_bytes()
    assert p["data_bytes"] == len(raw) < 100_000
    assert p["data_sha256"] == hashlib.sha256(raw).hexdigest()
    assert len(p["curve"]["steps"]) == len(p["curve"]["loss"]) == 30
    with np.load(DATA / DATA_FILE, allow_pickle=False) as npz:  # no pickles: loads without
        assert sorted(npz.files) == sorted(load_model().model.parameters())


def _copy(tmp_path: Path) -> Path:
    for name in (DATA_FILE, PROVENANCE_FILE):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path


def test_a_changed_or_missing_file_is_refused_with_its_name(tmp_path):
    folder = _copy(tmp_path)
    assert load_model(folder).model.size() == load_model().model.size()
    raw = bytearray((folder / DATA_FILE).read_bytes())
    raw[-100] ^= 1
    (folder / DATA_FILE).write_bytes(bytes(raw))
    with pytest.raises(AttentionInputError, match=r"induction\.npz is corrupt: its sha256 is "
                                                  r"[0-9a-f]{16}… but induction\.json records"):
        load_model(folder)
    (folder / PROVENANCE_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(AttentionInputError, match=r"induction\.json is not the JSON a training "
                                                  r"run writes \(KeyError"):
        load_model(folder)
    (folder / PROVENANCE_FILE).unlink()
    with pytest.raises(AttentionInputError, match=r"^induction\.json is missing "
                                                  r"\(FileNotFoundError\)\. Reinstall"):
        load_model(folder)


def test_an_npz_with_other_arrays_is_refused_even_with_the_right_checksum(tmp_path):
    folder = _copy(tmp_path)
    buffer = folder / "other.npz"
    np.savez(buffer, token_embedding=np.zeros((3, 2)))
    raw = buffer.read_bytes()
    (folder / DATA_FILE).write_bytes(raw)
    p = json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8"))
    p["data_sha256"] = hashlib.sha256(raw).hexdigest()
    (folder / PROVENANCE_FILE).write_text(json.dumps(p), encoding="utf-8")
    with pytest.raises(AttentionInputError, match=r"induction\.npz does not hold the model's "
                                                  r"parameters"):
        load_model(folder)


def test_the_smoke_run_of_the_command_writes_weights_that_load_the_same_each_time(tmp_path,
                                                                                  capsys):
    """A few steps, in this process; twice gives the same bytes (the npz has no date)."""
    assert command.main(["train", "--smoke", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "step    20  loss" in out and "held-out accuracy" in out
    assert "s of CPU time" in out and f"wrote {tmp_path / 'a'}/induction.npz" in out
    command.main(["train", "--smoke", "--out", str(tmp_path / "b")])
    a, b = (json.loads((tmp_path / x / PROVENANCE_FILE).read_text()) for x in "ab")
    assert a["data_sha256"] == b["data_sha256"]
    assert a["command"] == f"python -m course_lib.tiny_gpt train --smoke --out {tmp_path / 'a'}"
    loaded = load_model(tmp_path / "a")
    assert loaded.provenance["config"]["steps"] == 20
    assert command.main(["evaluate", "--weights", str(tmp_path / "a"), "--sequences", "50"]) == 0
    assert "previous-token score" in capsys.readouterr().out


def test_the_command_runs_as_typed_and_says_what_is_wrong(tmp_path):
    done = subprocess.run([sys.executable, "-m", "course_lib.tiny_gpt", "train", "--smoke",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / DATA_FILE).exists() and (tmp_path / PROVENANCE_FILE).exists()
    missing = subprocess.run([sys.executable, "-m", "course_lib.tiny_gpt", "evaluate",
                              "--weights", str(tmp_path / "nothing")], capture_output=True,
                             text=True, timeout=300)
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: induction.json is missing")
