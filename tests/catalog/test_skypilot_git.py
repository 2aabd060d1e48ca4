"""Cutting a dated snapshot out of a local git copy of SkyPilot's catalog.

A small repository is made here with the same layout (``catalogs/vN/<cloud>/vms.csv``),
holding the cited Lambda excerpt (tests/skypilot_excerpts.py) at a fixed commit date.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from skypilot_excerpts import LAMBDA_V9

from gpudesk.catalog.price_snapshots import read_folder
from gpudesk.catalog.skypilot_git import (
    GitSourceError,
    extract_snapshot,
    gpu_excerpt,
    valid_commit,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

CPU_ROW = "cpu_4x_general,,,4.0,16.0,0.2,us-east-1,,"  # in the excerpt


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "catalog"
    old = repo / "catalogs" / "v8" / "lambda"
    new = repo / "catalogs" / "v9" / "lambda"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    lines = LAMBDA_V9.splitlines()
    (old / "vms.csv").write_text(lines[0] + "\n", encoding="utf-8")
    (new / "vms.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_AUTHOR_DATE": "2026-11-30T23:30:00-05:00",
        "GIT_COMMITTER_DATE": "2026-11-30T23:30:00-05:00",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bot"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    return repo, commit


def test_a_commit_becomes_a_dated_folder_the_importer_reads(tmp_path: Path) -> None:
    repo, commit = _repo(tmp_path)
    folder = extract_snapshot(repo, commit, tmp_path / "out")
    # dated by the commit's committer date, in UTC (04:30 on 12-01)
    assert folder.name == "2026-12-01"
    manifest = (folder / "SNAPSHOT.toml").read_text(encoding="utf-8")
    assert 'basis = "commit"' in manifest and commit in manifest
    assert 'path = "catalogs/v9/lambda/vms.csv"' in manifest  # the newest schema folder
    report = read_folder(tmp_path / "out", today=dt.date(1970, 1, 1))
    (snapshot,) = report.snapshots
    assert snapshot.taken == dt.date(2026, 12, 1) and snapshot.basis == "commit"
    assert snapshot.sources["lambda"].commit == commit
    assert {offer.gpu_id for offer in snapshot.offers} >= {"h100-sxm5"}
    excerpt = (folder / "lambda" / "vms.csv").read_text(encoding="utf-8")
    assert CPU_ROW not in excerpt  # only GPU rows the table maps
    for line in excerpt.splitlines():
        assert line in LAMBDA_V9  # verbatim


def test_the_same_commit_gives_the_same_bytes(tmp_path: Path) -> None:
    repo, commit = _repo(tmp_path)
    first = extract_snapshot(repo, commit, tmp_path / "a")
    second = extract_snapshot(repo, commit[:12], tmp_path / "b")
    for name in ("SNAPSHOT.toml", "lambda/vms.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_unknown_commits_and_folders_are_one_clear_error(tmp_path: Path) -> None:
    repo, _commit = _repo(tmp_path)
    with pytest.raises(GitSourceError):
        extract_snapshot(repo, "0" * 40, tmp_path / "out")
    with pytest.raises(GitSourceError):
        extract_snapshot(tmp_path / "nothing", "abcdef1", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@given(st.text(max_size=60))
def test_only_plain_hex_commits_are_accepted(text: str) -> None:
    # the commit reaches git's argument list: no options, refs or ranges
    accepted = valid_commit(text)
    assert accepted == (7 <= len(text) <= 40 and all(c in "0123456789abcdef" for c in text))
    if not accepted:
        with pytest.raises(GitSourceError):
            extract_snapshot(Path("/nonexistent"), text, Path("/nonexistent/out"))


def test_the_excerpt_keeps_the_cheapest_row_of_each_instance_type() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region"
    rows = [
        "gpu_1x_h100_sxm5,H100,1,3.29,us-east-1",
        "gpu_1x_h100_sxm5,H100,1,2.99,us-west-1",
        "gpu_8x_h100_sxm5,H100,8,23.92,us-east-1",
        "gpu_1x_mystery,MYSTERY,1,1.0,us-east-1",
    ]
    text, mapped = gpu_excerpt(("\n".join([header, *rows]) + "\n").encode(), "lambda")
    assert mapped == 3
    assert text.splitlines() == [header, rows[1], rows[2]]
