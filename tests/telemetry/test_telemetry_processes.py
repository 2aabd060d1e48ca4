"""A GPU process's user, container and pod, from /proc texts (untrusted)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from reach import reached

from gpudesk.telemetry.processes import cgroup_labels, process_labels, user_of

DOCKER_ID = "3f4e" * 16
POD_UID = "0d8f2a4b-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


@pytest.mark.parametrize(
    ("text", "container", "pod"),
    [
        (f"0::/system.slice/docker-{DOCKER_ID}.scope\n", DOCKER_ID[:12], ""),
        (f"12:devices:/docker/{DOCKER_ID}\n0::/\n", DOCKER_ID[:12], ""),
        (
            "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
            f"{POD_UID.replace('-', '_')}.slice/cri-containerd-{DOCKER_ID}.scope\n",
            DOCKER_ID[:12],
            POD_UID,
        ),
        (f"0::/kubepods/burstable/pod{POD_UID}/{DOCKER_ID}\n", DOCKER_ID[:12], POD_UID),
        ("0::/user.slice/user-1000.slice/session-3.scope\n", "", ""),
        ("not a cgroup file", "", ""),
    ],
)
def test_container_and_pod_from_cgroup_paths(text: str, container: str, pod: str) -> None:
    assert cgroup_labels(text) == (container, pod)


def test_this_process_is_labelled_with_its_user(tmp_path: Path) -> None:
    user, _, _ = process_labels(os.getpid())
    assert user  # this process exists and has a user
    assert process_labels(2**22 + 12345) == ("", "", "")  # no such PID: empty labels


def test_a_status_without_a_uid_line_has_no_user() -> None:
    assert user_of("Name:\tpython\n") == ""
    assert user_of("Uid:\t0\t0\t0\t0\n") == "root"


_HEX = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    st.text(alphabet="0123456789abcdefX", min_size=60, max_size=66),
)
_CGROUP = st.one_of(
    st.text(max_size=300),
    st.builds(
        "{}::/{}{}{}\n".format,
        st.sampled_from(["0", "12:devices", "x"]),
        st.sampled_from(["system.slice/docker-", "docker/", "kubepods/pod/", "a/b-", ""]),
        _HEX,
        st.sampled_from([".scope", "", "/", ".slice"]),
    ),
)


@given(_CGROUP)
@pytest.mark.reaches(found=10, empty=35)
def test_any_cgroup_text_gives_plain_labels_or_none(text: str) -> None:
    container, pod = cgroup_labels(text)
    reached("found" if container else "empty")
    assert container == "" or (
        len(container) == 12 and all(c in "0123456789abcdef" for c in container)
    )
    assert pod == "" or len(pod) == 36
