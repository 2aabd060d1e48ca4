"""Issue 30: the safe write keeps the kernel's symlink rule and removes only its own temps."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk import storage
from gpudesk.storage import STALE_TEMP_AGE_S, UnsafeTargetError, atomic_write_text

OTHER_UID = 54321
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="lchown to another user needs root")


def _sticky_world_writable(folder: Path) -> Path:
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


@needs_root
def test_a_foreign_link_in_a_sticky_world_writable_folder_is_not_followed(tmp_path: Path) -> None:
    """Another user's /tmp/report.csv -> /etc/file: root must not replace /etc/file."""
    target = tmp_path / "owned-by-root"
    target.write_text("precious", "utf-8")
    shared = _sticky_world_writable(tmp_path / "tmp")
    link = shared / "report.csv"
    link.symlink_to(target)
    os.lchown(link, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafeTargetError, match="another user's symlink"):
        atomic_write_text(link, "overwritten")
    assert target.read_text("utf-8") == "precious"
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["owned-by-root", "tmp"]
    assert [p.name for p in shared.iterdir()] == ["report.csv"]
    with pytest.raises(UnsafeTargetError, match="another user's symlink"):
        storage.check_writable(link)


@needs_root
def test_a_foreign_link_to_a_folder_in_a_sticky_folder_is_not_followed(tmp_path: Path) -> None:
    target_folder = tmp_path / "etc"
    target_folder.mkdir()
    shared = _sticky_world_writable(tmp_path / "tmp")
    link = shared / "out"
    link.symlink_to(target_folder)
    os.lchown(link, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafeTargetError, match="another user's symlink"):
        atomic_write_text(link / "passwd", "x")
    assert list(target_folder.iterdir()) == []


@needs_root
def test_links_the_kernel_would_follow_are_followed(tmp_path: Path) -> None:
    # An ordinary (not sticky) folder: a link of anyone is followed.
    target = tmp_path / "real.csv"
    plain = tmp_path / "plain"
    plain.mkdir()
    plain.chmod(0o777)
    link = plain / "a.csv"
    link.symlink_to(target)
    os.lchown(link, OTHER_UID, OTHER_UID)
    atomic_write_text(link, "one")
    assert target.read_text("utf-8") == "one"
    # A sticky folder owned by the link's owner (the kernel allows that too).
    shared = _sticky_world_writable(tmp_path / "home-tmp")
    os.chown(shared, OTHER_UID, OTHER_UID)
    link = shared / "b.csv"
    link.symlink_to(target)
    os.lchown(link, OTHER_UID, OTHER_UID)
    atomic_write_text(link, "two")
    assert target.read_text("utf-8") == "two"


def test_our_own_link_in_a_sticky_folder_is_followed(tmp_path: Path) -> None:
    target = tmp_path / "real.csv"
    shared = _sticky_world_writable(tmp_path / "tmp")
    link = shared / "mine.csv"
    link.symlink_to(target)
    atomic_write_text(link, "mine")
    assert target.read_text("utf-8") == "mine"


@needs_root
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sticky=st.booleans(),
    world_writable=st.booleans(),
    link_uid=st.sampled_from([0, OTHER_UID]),
    folder_uid=st.sampled_from([0, OTHER_UID, OTHER_UID + 1]),
    depth=st.integers(min_value=1, max_value=3),
)
def test_the_write_follows_the_kernels_protected_symlinks_rule(
    tmp_path_factory: pytest.TempPathFactory,
    sticky: bool,
    world_writable: bool,
    link_uid: int,
    folder_uid: int,
    depth: int,
) -> None:
    """Through a chain of links, the target is written exactly when fs.protected_symlinks=1
    would let this user follow the link: outside a sticky world-writable folder, or owned by
    the follower, or owned by the folder's owner."""
    base = tmp_path_factory.mktemp("rule")
    target = base / "target.txt"
    target.write_text("old", "utf-8")
    folder = base / "shared"
    folder.mkdir()
    folder.chmod((0o1000 if sticky else 0) | (0o777 if world_writable else 0o755))
    os.chown(folder, folder_uid, folder_uid)
    pointee = target
    for level in range(depth - 1):  # a chain of our own links in an ordinary folder
        hop = base / f"hop{level}"
        hop.symlink_to(pointee)
        pointee = hop
    link = folder / "link.txt"
    link.symlink_to(pointee)
    os.lchown(link, link_uid, link_uid)
    protected = sticky and world_writable
    allowed = not protected or link_uid == os.geteuid() or link_uid == folder_uid
    if allowed:
        atomic_write_text(link, "new")
        assert target.read_text("utf-8") == "new"
    else:
        with pytest.raises(UnsafeTargetError):
            atomic_write_text(link, "new")
        assert target.read_text("utf-8") == "old"


def test_a_users_file_that_looks_like_a_temporary_is_never_removed(tmp_path: Path) -> None:
    """The probe's case: `.backup.2024list.tmp`, an hour old, next to `compare --csv r.csv`."""
    users = [".backup.2024list.tmp", ".report.pdf.abcd1234.tmp", ".r.csv.k3j4h5g6.tmp"]
    old = time.time() - 3600
    for name in users:
        (tmp_path / name).write_text("the user's", "utf-8")
        os.utime(tmp_path / name, (old, old))
    atomic_write_text(tmp_path / "r.csv", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*users, "r.csv"])


def test_our_stale_temporaries_are_still_removed(tmp_path: Path) -> None:
    stale = tmp_path / storage.temporary_name("report.pdf")
    fresh = tmp_path / storage.temporary_name("report.pdf")
    for path in (stale, fresh):
        path.write_text("partial", "utf-8")
    old = time.time() - STALE_TEMP_AGE_S - 5
    os.utime(stale, (old, old))
    atomic_write_text(tmp_path / "table.csv", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, "table.csv"])


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"),
        min_size=1,
        max_size=40,
    )
)
def test_no_name_a_user_types_is_taken_for_ours(name: str) -> None:
    """Any name, even one shaped like ours, is ours only with a token we made."""
    made = storage.temporary_name(name)
    assert storage.is_our_temporary(made)
    assert len(made.encode("utf-8", "surrogateescape")) <= 255
    if not name.startswith(".") or not name.endswith(".tmp"):
        assert not storage.is_our_temporary(name)
    # Changing one character of our token makes it not ours.
    token_at = made.rindex(".", 0, len(made) - 4) + 1
    flipped = made[:token_at] + ("0" if made[token_at] != "0" else "1") + made[token_at + 1 :]
    assert not storage.is_our_temporary(flipped)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(
        st.from_regex(r"\.[a-z0-9.]{1,20}\.[a-z0-9_]{8}\.tmp", fullmatch=True), max_size=5
    )
)
def test_cleanup_never_removes_a_file_it_did_not_make(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("users")
    old = time.time() - 3600
    for name in set(names):
        (folder / name).write_text("keep", "utf-8")
        os.utime(folder / name, (old, old))
    assert storage.remove_stale_temporaries(folder, now=time.time()) == []
    assert sorted(p.name for p in folder.iterdir()) == sorted(set(names))


def test_a_sticky_world_writable_folder_is_recognised(tmp_path: Path) -> None:
    shared = _sticky_world_writable(tmp_path / "tmp")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
