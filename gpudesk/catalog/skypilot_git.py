"""Cut a dated snapshot folder out of a local git copy of SkyPilot's catalog.

``scripts/build_price_snapshot.py --git DIR --commit C`` uses this to turn one
commit of skypilot-org/skypilot-catalog (a clone, or a bare git directory) into
``<out>/<commit date>/<cloud>/vms.csv`` excerpts plus a ``SNAPSHOT.toml`` that
names the commit, so the bundled data is reproducible from a named commit:

* for each cloud, the newest schema folder ``catalogs/vN/<cloud>/vms.csv`` at
  that commit is read (``git show``, never a checkout);
* only rows the accelerator table maps are kept, verbatim, and of those only
  the cheapest row of each instance type (so the excerpt stays small);
* the snapshot is dated by the commit's committer date (``basis = "commit"``).

The same commit always gives the same bytes. Git is run without a shell, with
the commit checked against a strict pattern first.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path

from gpudesk.catalog.errors import CatalogError
from gpudesk.catalog.skypilot import parse_vms_csv, valid_cloud_name
from gpudesk.external import (
    ToolError,
    ToolNotFoundError,
    ToolOutputLimitError,
    ToolTimeoutError,
    run_tool,
)

#: A commit as this accepts it: 7 to 40 hex digits (no ref names, options or ranges).
COMMIT_PATTERN = re.compile(r"^[0-9a-f]{7,40}$")
_VMS = re.compile(r"^catalogs/v(\d{1,3})/([a-z0-9][a-z0-9_-]{0,39})/vms\.csv$")
REPOSITORY = "https://github.com/skypilot-org/skypilot-catalog"
GIT_TIMEOUT_S = 300.0
#: More than any one file or listing of the catalog repository (its vms.csv files are a
#: few MB each).
MAX_GIT_OUTPUT_BYTES = 512 * 1024 * 1024


class GitSourceError(CatalogError):
    """The git directory or commit cannot be read."""


def valid_commit(text: str) -> bool:
    return bool(COMMIT_PATTERN.match(text))


def _git(git_dir: Path, *args: str) -> bytes:
    try:
        done = run_tool(
            ["git", f"--git-dir={git_dir}", *args],
            GIT_TIMEOUT_S,
            max_stdout_bytes=MAX_GIT_OUTPUT_BYTES,
        )
    except ToolNotFoundError as exc:
        raise GitSourceError("git is not installed") from exc
    except ToolTimeoutError as exc:
        raise GitSourceError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g} s") from exc
    except ToolOutputLimitError as exc:
        raise GitSourceError(
            f"git {args[0]} printed more than {MAX_GIT_OUTPUT_BYTES // (1024 * 1024)} MiB"
        ) from exc
    except ToolError as exc:
        raise GitSourceError(str(exc)) from exc
    if done.returncode != 0:
        message = done.stderr_text.strip().splitlines()
        raise GitSourceError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done.stdout


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def newest_vms_paths(git_dir: Path, commit: str) -> dict[str, str]:
    """cloud -> the newest schema folder's ``vms.csv`` path at ``commit``."""
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", "catalogs")
    newest: dict[str, tuple[int, str]] = {}
    for line in listing.decode("utf-8", "replace").splitlines():
        match = _VMS.match(line)
        if match is None:
            continue
        version, cloud = int(match.group(1)), match.group(2)
        if cloud not in newest or version > newest[cloud][0]:
            newest[cloud] = (version, line)
    return {cloud: path for cloud, (_version, path) in sorted(newest.items())}


def gpu_excerpt(data: bytes, cloud: str) -> tuple[str, int]:
    """The header and, per instance type, the cheapest mapped row (verbatim), and
    how many mapped rows the file had."""
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = text.splitlines()
    if not lines:
        return "", 0
    header, mapped = lines[0], 0
    cheapest: dict[tuple[str, str], tuple[float, int]] = {}
    for index, line in enumerate(lines[1:], start=1):
        if not line.strip():
            continue
        result = parse_vms_csv(f"{header}\n{line}\n".encode(), cloud)
        if not result.offers:
            continue
        offer = result.offers[0]
        mapped += 1
        key = (offer.gpu_id, offer.instance_type)
        held = cheapest.get(key)
        if held is None or offer.usd_per_gpu_hour < held[0]:
            cheapest[key] = (offer.usd_per_gpu_hour, index)
    best = {index for _rate, index in cheapest.values()}
    kept = [lines[index] for index in sorted(best)]
    return "\n".join([header, *kept]) + "\n", mapped


def commit_date(git_dir: Path, commit: str) -> dt.date:
    stamp = _git(git_dir, "show", "-s", "--format=%cI", commit).decode().strip()
    return dt.datetime.fromisoformat(stamp).astimezone(dt.UTC).date()


def extract_snapshot(
    source: Path, commit: str, out_dir: Path, *, clouds: Sequence[str] | None = None
) -> Path:
    """Write ``out_dir/<commit date>/`` from ``commit`` of the git copy at ``source``."""
    if not valid_commit(commit):
        raise GitSourceError(f"{commit[:60]!r} is not a commit (7-40 lowercase hex digits)")
    git_dir = _git_dir(source)
    full = _git(git_dir, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    taken = commit_date(git_dir, full)
    folder = out_dir / taken.isoformat()
    manifest = [
        "# Excerpt of SkyPilot's public catalog (" + REPOSITORY + "):",
        "# each <cloud>/vms.csv holds the file's header and, per instance type, its",
        "# cheapest GPU row at the commit below, verbatim (scripts/build_price_snapshot.py --git).",
        f"taken = {taken.isoformat()}",
        'basis = "commit"',
        f'label = "skypilot-catalog {taken.isoformat()}"',
        "",
    ]
    wrote = False
    for cloud, path in newest_vms_paths(git_dir, full).items():
        if (clouds is not None and cloud not in clouds) or not valid_cloud_name(cloud):
            continue
        text, mapped = gpu_excerpt(_git(git_dir, "show", f"{full}:{path}"), cloud)
        if not mapped:
            continue
        (folder / cloud).mkdir(parents=True, exist_ok=True)
        (folder / cloud / "vms.csv").write_text(text, encoding="utf-8", newline="\n")
        manifest += [f"[clouds.{cloud}]", f'path = "{path}"', f'commit = "{full}"', ""]
        wrote = True
    if not wrote:
        raise GitSourceError(f"commit {full[:12]} has no GPU rows the accelerator table maps")
    (folder / "SNAPSHOT.toml").write_text("\n".join(manifest), encoding="utf-8", newline="\n")
    return folder
