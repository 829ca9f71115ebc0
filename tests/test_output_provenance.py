"""Issue 23 regressions on output folders: --force on foreign folders, run.json covered by verify,
manifest entries outside the folder, symlinks, umask, and a concurrent run into the same --out."""

import hashlib
import json
import os
from pathlib import Path

import pytest

from evalkit._output import SIDECAR, atomic_file, atomic_output_dir, verify_dir
from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
FOOD = ROOT / "tests" / "data" / "evalica" / "food.csv"


def _snapshot(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every entry below root: its mode and its bytes (or link target), links not followed."""
    out: dict[str, tuple[int, bytes | str]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder) / name
            st = p.lstat()
            body: bytes | str = os.readlink(p) if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir")
            out[p.relative_to(root).as_posix()] = (st.st_mode, body)
    return out


def _build(out, *, force=False):
    with atomic_output_dir(out, force=force, record={"seed": 1}) as d:
        (d.path / "a.txt").write_text("a")
        (d.path / "sub").mkdir()
        (d.path / "sub" / "b.txt").write_text("bb")
    return Path(out)


def test_force_on_a_folder_evalkit_did_not_write_leaves_it_byte_identical_and_exits_2(tmp_path, capsys):
    out = tmp_path / "thesis"
    (out / "chapters").mkdir(parents=True)
    (out / "thesis.tex").write_text("\\documentclass{article}")
    (out / "chapters" / "one.tex").write_bytes(b"\x00\xff binary too")
    (out / "run.json").write_text('{"not": "ours"}')  # a run.json that is not a complete evalkit manifest
    before = _snapshot(out)
    assert main(["rate", str(FOOD), "--out", str(out), "--force"]) == 2
    err = capsys.readouterr().err
    assert "was not written by evalkit" in err and "Traceback" not in err
    assert _snapshot(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".thesis")]  # no partial left behind


def test_force_refuses_an_evalkit_folder_a_user_added_a_file_to(tmp_path):
    out = _build(tmp_path / "o")
    (out / "notes.txt").write_text("mine")
    before = _snapshot(out)
    with pytest.raises(ValueError, match="does not list: 'notes.txt'"):
        _build(out, force=True)
    assert _snapshot(out) == before
    (out / "notes.txt").unlink()
    _build(out, force=True)  # evalkit's own folder, untouched: replaced
    assert verify_dir(out) == []


def test_force_refuses_a_symlinked_out(tmp_path):
    real = _build(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(ValueError, match="symbolic link"):
        _build(link, force=True)


def test_sidecar_holds_the_manifest_sha256_and_verify_catches_an_edit_to_run_json(tmp_path, capsys):
    out = _build(tmp_path / "o")
    body = (out / "run.json").read_bytes()
    assert (out / SIDECAR).read_text().split() == [hashlib.sha256(body).hexdigest(), "run.json"]
    run = json.loads(body)
    run["seed"] = 2  # a silent edit of the record, files untouched
    (out / "run.json").write_text(json.dumps(run, indent=2))
    problems = verify_dir(out)
    assert problems == [f"changed: run.json (its SHA-256 differs from {SIDECAR})"]
    assert main(["verify", str(out)]) == 1
    (out / SIDECAR).unlink()
    assert any("cannot be checked" in p for p in verify_dir(out))


def _rewrite_manifest(out: Path, files: list) -> None:
    run = json.loads((out / "run.json").read_text())
    run["files"] = files
    body = (json.dumps(run) + "\n").encode()
    (out / "run.json").write_bytes(body)
    (out / SIDECAR).write_text(f"{hashlib.sha256(body).hexdigest()}  run.json\n")  # a consistent forgery


def test_verify_refuses_entries_outside_the_folder_and_non_objects_without_traceback(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    out = _build(tmp_path / "deep" / "o")
    good = json.loads((out / "run.json").read_text())["files"]
    rec = {"path": "../../secret.txt", "bytes": 1, "sha256": hashlib.sha256(b"s").hexdigest()}
    _rewrite_manifest(out, [*good, rec, "a.txt", 7, {"path": ""}, {"path": "/etc/hostname"}])
    problems = verify_dir(out)
    assert "entry 3 of run.json names '../../secret.txt', outside the folder; refused, not read" in problems
    assert any(p.startswith("entry 4 of run.json is a JSON str") for p in problems)
    assert any(p.startswith("entry 5 of run.json is a JSON int") for p in problems)
    assert "entry 6 of run.json has no 'path' string" in problems
    assert any("'/etc/hostname', outside the folder" in p for p in problems)
    assert main(["verify", str(out)]) == 1
    assert "Traceback" not in capsys.readouterr().err
    _rewrite_manifest(out, {"files": "not a list"})  # type: ignore[arg-type]
    assert any("complete" in p for p in verify_dir(out))


def test_verify_reports_symlinked_folders_and_files(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.txt").write_text("x")
    out = _build(tmp_path / "o")
    (out / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert "symbolic link: linked" in verify_dir(out)
    (out / "linked").unlink()
    (out / "sub" / "b.txt").unlink()
    (out / "sub" / "b.txt").symlink_to(elsewhere / "x.txt")
    assert "symbolic link: sub/b.txt" in verify_dir(out)
    root_link = tmp_path / "root_link"
    root_link.symlink_to(out, target_is_directory=True)
    assert "symbolic link" in verify_dir(root_link)[0]


@pytest.mark.parametrize("umask, dir_mode, file_mode", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600),
                                                        (0o002, 0o775, 0o664)])
def test_outputs_respect_the_umask(tmp_path, umask, dir_mode, file_mode):
    old = os.umask(umask)
    try:
        out = _build(tmp_path / "o")
        with atomic_file(tmp_path / "single.csv") as tmp:
            tmp.write_text("x\n")
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == dir_mode
    assert (out / "sub").stat().st_mode & 0o777 == dir_mode
    assert (out / "a.txt").stat().st_mode & 0o777 == file_mode
    assert (out / "run.json").stat().st_mode & 0o777 == file_mode
    assert (tmp_path / "single.csv").stat().st_mode & 0o777 == file_mode


def test_a_run_that_finds_its_out_written_meanwhile_fails_and_keeps_the_other_runs_folder(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(ValueError, match="exists and is not empty"):
        with atomic_output_dir(out, record={"run": "first"}) as d:
            (d.path / "first.txt").write_text("1")
            with atomic_output_dir(out, record={"run": "second"}) as d2:  # a concurrent run finishes first
                (d2.path / "second.txt").write_text("2")
    assert json.loads((out / "run.json").read_text())["run"] == "second"
    assert verify_dir(out) == [] and not (out / "first.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["o"]  # the failed run's partial is removed


@pytest.mark.parametrize("gz", [False, True])
def test_input_replaced_during_the_run_is_recorded_as_the_version_analysed(tmp_path, monkeypatch, gz):
    """The issue's case: the input changes while the report is computed (after the reader has read
    it). run.json must hold the SHA-256 and size of the bytes analysed, hashed when they were read,
    and say that the file on disk has changed since."""
    import gzip

    import evalkit.io
    from evalkit.report.write import ReportSpec, write_report

    first = FOOD.read_bytes()
    data = gzip.compress(first, mtime=0) if gz else first
    path = tmp_path / ("in.csv.gz" if gz else "in.csv")
    path.write_bytes(data)
    real = evalkit.io.read_comparisons

    def read_then_replace(*args, **kwargs):
        out = real(*args, **kwargs)
        path.write_bytes(b"model_a,model_b,winner\nx,y,model_a\n")  # another version, 0 rows in common
        return out

    monkeypatch.setattr(evalkit.io, "read_comparisons", read_then_replace)
    write_report(ReportSpec(comparisons=path, sections=[]), tmp_path / "out")
    (entry,) = [e for e in json.loads((tmp_path / "out" / "run.json").read_text())["inputs"] if e["kind"] ==
                "comparisons"]
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    assert entry["hashed"] == "when read" and entry["changed_since_read"] is True
    assert entry["rows_read"] == first.count(b"\n") - 1  # and the rows are those of that version
