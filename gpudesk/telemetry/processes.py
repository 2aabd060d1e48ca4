"""Who runs a GPU process: its user, and its container and pod read from its cgroup.

``/proc/PID/status`` gives the real UID (the ``Uid:`` line's first number),
named through the password database; ``/proc/PID/cgroup`` gives the cgroup
path (cgroup v2: one ``0::PATH`` line; v1: ``N:controllers:PATH`` lines).
Container runtimes name the process's cgroup after the container's 64-hex
id (``docker-ID.scope``, ``cri-containerd-ID.scope``, ``crio-ID.scope``,
``libpod-ID.scope``, or ``/docker/ID``), and Kubernetes puts pods under
``kubepods...pod<UID>`` (dashes of the UID as underscores under the systemd
driver). Both files are untrusted text: size-capped, and any part that
does not look as described gives an empty label, never an error.
"""

from __future__ import annotations

import pwd
import re
from pathlib import Path

from gpudesk.storage import read_regular_file

#: /proc/PID/cgroup and status are a few hundred bytes; more is not them.
MAX_PROC_FILE_BYTES = 64 * 1024
_CONTAINER = re.compile(r"(?:^|[/-])([0-9a-f]{64})(?:\.scope)?$")
_POD = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")
_UID = re.compile(r"^Uid:\s+([0-9]{1,10})\s", re.MULTILINE)


def cgroup_labels(text: str) -> tuple[str, str]:
    """(container id, pod UID) from a ``/proc/PID/cgroup`` text; "" for either not found."""
    container = pod = ""
    for line in text.splitlines()[:64]:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        path = parts[2].strip()
        if not container:
            for segment in reversed(path.split("/")[-8:]):
                found = _CONTAINER.search(segment)
                if found:
                    container = found.group(1)[:12]  # the short id, as `docker ps` prints it
                    break
        if not pod:
            found_pod = _POD.search(path)
            if found_pod:
                pod = found_pod.group(1).replace("_", "-")
    return container, pod


def _read(path: Path) -> str | None:
    try:
        return read_regular_file(path, MAX_PROC_FILE_BYTES).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def user_of(status_text: str) -> str:
    """The user name of a ``/proc/PID/status`` text's real UID ("" when unknown)."""
    found = _UID.search(status_text)
    if found is None:
        return ""
    try:
        name = pwd.getpwuid(int(found.group(1))).pw_name
    except (KeyError, OverflowError, ValueError):
        return found.group(1)
    return name if name.isprintable() and len(name) <= 64 else found.group(1)


def process_labels(pid: int, proc: Path = Path("/proc")) -> tuple[str, str, str]:
    """(user, container, pod) of a running process; "" for whatever cannot be read.

    A process in another PID namespace (the exporter in a container) is not
    under this ``/proc``: all three are empty then.
    """
    status = _read(proc / str(pid) / "status")
    cgroup = _read(proc / str(pid) / "cgroup")
    user = "" if status is None else user_of(status)
    container, pod = ("", "") if cgroup is None else cgroup_labels(cgroup)
    return user, container, pod
