"""Safe file writes: a crash mid-write never loses what was there.

Every file GPUDesk saves (history, exports, user catalog) goes through
:func:`atomic_write_bytes`. Its rules, and why:

- A regular file is replaced atomically: the new bytes go to a temporary file
  in the same folder, which is fsynced and renamed over the target, so a
  reader sees the old content or the new, never a truncated file.
- A symlink is written *through*, to its target (atomically, in the target's
  folder): replacing the link itself would silently detach the user's file.
  But a link in a sticky world-writable folder (``/tmp``) is followed only if
  it is the user's own or the folder owner's: the kernel's
  ``fs.protected_symlinks`` rule, kept even where the kernel does not, so that
  root never replaces a file another user's link points to.
- A character device (``/dev/null``, a terminal), a FIFO or a file reached
  through ``/proc``/``/dev/fd`` (``/dev/stdout`` redirected to a file) is
  written directly, with no rename: renaming over it would replace the device
  node (as root, ``/dev/null`` itself) or the shell's redirection.
- Anything else that is not a regular file (a directory, a block device, a
  socket) is refused with :class:`UnsafeTargetError`, and nothing is touched.
- An existing file the user may not write (``0444``, or another user's
  ``0644``) is refused with :class:`NotWritableError`, as ``cp`` and a shell's
  ``>`` refuse it: a writable folder lets the rename replace it, but the user
  could not have written it. (Root may write anything, as with ``cp``.)
- A file the user may write but does not own (root replacing another user's
  file, a group-writable one) keeps its owner, group and mode: the temporary
  file is given them before the rename. Where that ``chown`` is not permitted
  (an unprivileged user writing a group-writable file of someone else's) the
  file is written in place instead, as ``cp`` does: its owner and mode stay,
  but a crash or a full disk mid-write can leave it truncated.
- A kill between creating the temporary file and renaming it leaves a hidden
  ``.NAME.gpudesk-TOKEN.tmp`` behind; the next write to that folder removes
  such files older than :data:`STALE_TEMP_AGE_S` -- only ours: the token is a
  random part and a keyed check of it (:func:`is_our_temporary`), so a file of
  the user's, whatever its name, is never taken for one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import BinaryIO

from gpudesk.errors import GpuDeskError

#: A temporary file of ours this old is a leftover of a killed write, never one in use.
STALE_TEMP_AGE_S = 60.0
#: Our temporary files: ".<part of the target's name>.gpudesk-<12 random hex><8 check hex>.tmp".
_TEMP_PATTERN = re.compile(
    r"^\..*\.gpudesk-(?P<random>[0-9a-f]{12})(?P<check>[0-9a-f]{8})\.tmp$",
    re.DOTALL,
)
#: What keys the check: a file whose token was not made by :func:`temporary_name` fails it.
_TEMP_KEY = b"gpudesk temporary file v1"
#: How many links one write follows before giving up (the kernel's own limit is 40).
_MAX_LINKS = 40
#: Keep the temporary name within a file system's 255-byte limit for long targets.
_MAX_PREFIX_BYTES = 200
#: Folders whose entries are views of open file descriptors, not files to replace.
_FD_FOLDERS = ("/proc/", "/dev/fd/")


class StorageError(GpuDeskError, OSError):
    """A file GPUDesk refuses to read or write; an ``OSError`` as ``open``'s are:
    ``filename`` is the path, ``strerror`` says why."""


class UnsafeTargetError(StorageError):
    """The target exists and is not something GPUDesk may write (a directory, a
    block device, a socket, a FIFO with no reader); ``strerror`` says which."""


class NotWritableError(UnsafeTargetError):
    """The target is a file the user has no write permission on (``cp`` would refuse it)."""


def _may_write(path: Path) -> bool:
    """Whether the effective user may write ``path`` (root may write any file)."""
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)


def _refuse_unwritable(path: Path) -> None:
    if not _may_write(path):
        raise NotWritableError(
            errno.EACCES, "permission denied: you may not write this file", str(path)
        )


def _process_umask() -> int:
    """The umask, read without changing it (Linux /proc); 022 elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _new_file_mode() -> int:
    return 0o666 & ~_process_umask()


def _token_check(random_part: str) -> str:
    return hashlib.blake2s(random_part.encode("ascii"), key=_TEMP_KEY, digest_size=4).hexdigest()


def temporary_name(target_name: str) -> str:
    """A fresh name for the temporary file of a write to ``target_name`` (in its folder)."""
    encoded = target_name.encode("utf-8", "surrogateescape")[:_MAX_PREFIX_BYTES]
    random_part = secrets.token_hex(6)
    token = random_part + _token_check(random_part)
    return "." + encoded.decode("utf-8", "ignore") + ".gpudesk-" + token + ".tmp"


def is_our_temporary(name: str) -> bool:
    """Whether ``name`` was made by :func:`temporary_name` (its token checks out)."""
    match = _TEMP_PATTERN.match(name)
    if match is None:
        return False
    return secrets.compare_digest(match["check"], _token_check(match["random"]))


def _is_protected_folder(info: os.stat_result) -> bool:
    """Sticky and world-writable, like ``/tmp``: anyone may put a link there."""
    mode = info.st_mode
    return bool(mode & stat.S_ISVTX) and bool(mode & stat.S_IWOTH)


def _check_link(link: Path, link_info: os.stat_result) -> None:
    """Refuse to follow ``link`` where ``fs.protected_symlinks=1`` would.

    The kernel follows a symlink in a sticky world-writable folder only when
    the follower owns it or the folder's owner does. With that setting off (or
    on another system) a write as root through ``/tmp/x -> /etc/shadow`` made
    by another user would replace ``/etc/shadow``.
    """
    try:
        folder_info = os.stat(link.parent)
    except OSError:
        return  # the write itself will fail and say why
    if not _is_protected_folder(folder_info):
        return
    if link_info.st_uid in (os.geteuid(), folder_info.st_uid):
        return
    raise UnsafeTargetError(
        errno.EACCES,
        f"it is another user's symlink (uid {link_info.st_uid}) in the sticky "
        f"world-writable folder {link.parent}; not followed",
        str(link),
    )


def resolve_for_writing(path: Path) -> Path:
    """``path`` with every symlink resolved, each one checked by :func:`_check_link`.

    Like :func:`os.path.realpath`, a missing last part is kept as it is.

    Raises:
        UnsafeTargetError: a link on the way that the kernel's rule would not follow.
        OSError: a symlink loop (more than 40 links).
    """
    # Not abspath: ".." must apply after the link before it is resolved, as in the kernel.
    pending = list((Path.cwd() / path).parts[1:])
    resolved = Path("/")
    followed = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            resolved = resolved.parent
            continue
        candidate = resolved / part
        try:
            info = os.lstat(candidate)
        except OSError:
            resolved = candidate  # missing (or unreadable): nothing more to follow here
            continue
        if not stat.S_ISLNK(info.st_mode):
            resolved = candidate
            continue
        followed += 1
        if followed > _MAX_LINKS:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", str(path))
        _check_link(candidate, info)
        pointee = os.readlink(candidate)
        if os.path.isabs(pointee):
            resolved = Path("/")
        pending[:0] = [piece for piece in Path(pointee).parts if piece != "/"]
    return resolved


def _is_fd_view(path: Path) -> bool:
    text = os.path.abspath(path)
    return text.startswith(_FD_FOLDERS) or text in ("/dev/stdout", "/dev/stderr")


def remove_stale_temporaries(folder: Path, *, now: float | None = None) -> list[Path]:
    """Remove our leftover temporary files in ``folder``; return what was removed.

    Only regular files of this user matching our name pattern and older than
    :data:`STALE_TEMP_AGE_S` go: a write in progress (ours or another
    process's) is younger than that. Errors are ignored: this is tidying.
    """
    removed: list[Path] = []
    now = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not is_our_temporary(name):
            continue
        candidate = folder / name
        try:
            info = candidate.lstat()
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                continue
            if now - info.st_mtime < STALE_TEMP_AGE_S:
                continue
            candidate.unlink()
        except OSError:
            continue
        removed.append(candidate)
    return removed


def _write_directly(path: Path, data: bytes, *, fifo: bool = False, truncate: bool = False) -> None:
    """Write into an existing device, FIFO or descriptor view, without renaming."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if fifo:
        # Opening a FIFO for writing blocks until a reader comes; never hang.
        flags |= os.O_NONBLOCK
    if truncate:
        flags |= os.O_TRUNC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if fifo and exc.errno == errno.ENXIO:
            raise UnsafeTargetError(errno.ENXIO, "it is a FIFO with no reader", str(path)) from exc
        raise
    try:
        if fifo:
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by the rules in this module's docstring.

    A new or replaced regular file gets the replaced file's permissions, or the
    usual ones for a new file (mkstemp alone would leave it private, 0600).

    Raises:
        NotWritableError: ``path`` is a file the user has no write permission
            on; nothing was written.
        UnsafeTargetError: ``path`` is a directory, a block device, a socket
            or a FIFO nobody reads; nothing was written.
        OSError: the folder is missing or unwritable, the name is too long or
            the disk is full; the original file (if any) is untouched.
    """
    path = Path(path)
    if not str(path) or str(path) == ".":
        raise UnsafeTargetError(errno.ENOENT, "no file name given", str(path))
    target = resolve_for_writing(path)  # refuses a link the kernel would not follow
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None  # new file, or a symlink to a file not yet there
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise UnsafeTargetError(errno.EISDIR, "it is a directory", str(path))
        if stat.S_ISFIFO(info.st_mode):
            _write_directly(path, data, fifo=True)
            return
        if stat.S_ISCHR(info.st_mode):
            _write_directly(path, data)
            return
        if not stat.S_ISREG(info.st_mode):
            kind = "a block device" if stat.S_ISBLK(info.st_mode) else "not a regular file"
            raise UnsafeTargetError(errno.EINVAL, f"it is {kind}", str(path))
        if _is_fd_view(path):
            _write_directly(path, data, truncate=True)
            return
        _refuse_unwritable(path)
    # Through any symlinks to the file they name (which may not exist yet).
    mode = stat.S_IMODE(info.st_mode) if info is not None else _new_file_mode()
    remove_stale_temporaries(target.parent)
    fd, tmp_name = _create_temporary(target)
    try:
        with os.fdopen(fd, "wb") as tmp:
            owned = info is None or _take_owner(tmp.fileno(), info)
            if owned:
                os.fchmod(tmp.fileno(), mode)  # after fchown, which clears setuid/setgid
                tmp.write(data)
                tmp.flush()
                os.fsync(tmp.fileno())
        if owned:
            os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    if not owned:
        # The replacement could not be given the file's owner: keep the file, rewrite it.
        os.unlink(tmp_name)
        _write_in_place(target, data)


def _take_owner(fd: int, info: os.stat_result) -> bool:
    """Give the temporary file ``fd`` the replaced file's owner and group.

    Returns False where that is not permitted (only root may give a file away;
    a user may set only a group they belong to): the caller writes in place.
    """
    uid = -1 if info.st_uid == os.geteuid() else info.st_uid
    gid = -1 if info.st_gid == os.getegid() else info.st_gid
    if uid == -1 and gid == -1:
        return True
    try:
        os.fchown(fd, uid, gid)
    except PermissionError:
        return False
    return True


def _write_in_place(target: Path, data: bytes) -> None:
    """Truncate and rewrite the regular file ``target`` (what ``cp`` does), never through a link."""
    flags = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeTargetError(errno.EINVAL, "it is not a regular file", str(target))
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_temporary(target: Path) -> tuple[int, str]:
    """A new private file next to ``target`` (created exclusively, never through a link)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = str(target.parent / temporary_name(target.name))
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(target))


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


class FileTooLargeError(StorageError):
    """A file over the size limit its reader sets; ``strerror`` gives the limit."""


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class NotRegularFileError(UnsafeTargetError):
    """A path given to be read is not a regular file; ``kind`` says what it is
    ("a FIFO", "a directory", "a symlink loop"), ``strerror`` is "it is <kind>"."""

    kind = "not a regular file"


def _not_regular(path: str | os.PathLike[str], mode: int | None) -> NotRegularFileError:
    """The refusal of ``path``, of file type ``mode`` (None: a symlink loop)."""
    kind = "a symlink loop" if mode is None else _kind_of(mode)
    code = errno.ELOOP if mode is None else errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
    error = NotRegularFileError(code, f"it is {kind}", os.fspath(path))
    error.kind = kind
    return error


def _open_regular(path: str | os.PathLike[str], max_bytes: int) -> int:
    """A read-only descriptor on ``path``, checked as :func:`read_regular_file` says."""
    try:
        # Looked at before opening: opening some devices does something (a tape
        # rewinds, a watchdog starts), and a FIFO or device is refused anyway.
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _not_regular(path, None) from None
        raise
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path, info.st_mode)
    limit = f"larger than the {_size_text(max_bytes)} limit"
    if info.st_size > max_bytes:
        raise FileTooLargeError(errno.EFBIG, limit, os.fspath(path))
    # O_NONBLOCK: the name may have become a FIFO since the stat; opening one must
    # not wait for a writer. O_NOCTTY: a terminal never becomes ours.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)  # what was opened is what is read: checked again
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(path, info.st_mode)
        if info.st_size > max_bytes:
            raise FileTooLargeError(errno.EFBIG, limit, os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``.

    Every file a user names (an import, a folder's files, a config) is read
    through here or :func:`open_regular_file`: a FIFO would block the reader
    forever, ``/dev/zero`` would never end, a huge file would fill memory. The
    path is checked before it is opened, opened without blocking and checked
    again on the open descriptor, so a file swapped for a FIFO between the
    check and the open cannot hang us. Nothing is read before both checks.

    Raises:
        NotRegularFileError: not a regular file (a directory, FIFO, device,
            socket) or a symlink loop; ``kind`` says which.
        FileTooLargeError: larger than ``max_bytes`` (also if it grows past
            that while being read).
        OSError: missing, unreadable, a name too long.
    """
    fd = _open_regular(path, max_bytes)
    try:
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:  # it grew while we read
            limit = f"larger than the {_size_text(max_bytes)} limit"
            raise FileTooLargeError(errno.EFBIG, limit, os.fspath(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_regular_file(
    path: str | os.PathLike[str], max_bytes: int, buffering: int = -1
) -> BinaryIO:
    """``path`` opened for reading in binary, checked as :func:`read_regular_file` does.

    For readers that stream a large file rather than hold it: the size is
    checked when it is opened, and the caller bounds what it reads after that.
    ``buffering`` is :func:`open`'s (the reader's buffer size; -1 the default).

    Raises:
        NotRegularFileError, FileTooLargeError, OSError: as :func:`read_regular_file`.
    """
    return os.fdopen(_open_regular(path, max_bytes), "rb", buffering=buffering)


def read_refusal(error: OSError) -> str:
    """What follows a path's name when reading it failed: "is a FIFO, not a regular
    file", "is larger than the 1 MiB limit", "cannot be read (Permission denied)"."""
    if isinstance(error, NotRegularFileError):
        kind = error.kind
        return (
            "is not a regular file"
            if kind == "not a regular file"
            else f"is {kind}, not a regular file"
        )
    if isinstance(error, FileTooLargeError):
        return f"is {error.strerror}"
    return f"cannot be read ({error.strerror or error})"


def _size_text(size: int) -> str:
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MiB"
    if size >= 1 << 10 and size % (1 << 10) == 0:
        return f"{size >> 10} KiB"
    return f"{size} bytes"


def check_writable(path: Path) -> None:
    """Fail early, before any work, for a target :func:`atomic_write_bytes` would refuse.

    Raises:
        NotWritableError: an existing file the user has no write permission on.
        UnsafeTargetError: a directory, block device, socket; an empty name.
        OSError: the name is too long, a symlink loop, the folder is missing,
            not a folder or not writable (``strerror`` says which).
    """
    path = Path(path)
    if not str(path) or str(path) == ".":
        raise UnsafeTargetError(errno.ENOENT, "no file name given", str(path))
    resolve_for_writing(path)  # a link the kernel would not follow
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass  # the folder check below words it
    else:
        if stat.S_ISDIR(info.st_mode):
            raise UnsafeTargetError(errno.EISDIR, "it is a directory", str(path))
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISCHR(info.st_mode)) and not stat.S_ISFIFO(
            info.st_mode
        ):
            raise UnsafeTargetError(errno.EINVAL, f"it is {_kind_of(info.st_mode)}", str(path))
        if not stat.S_ISREG(info.st_mode) or _is_fd_view(path):
            return  # written in place; opening it is the check
        _refuse_unwritable(path)
    folder = resolve_for_writing(path).parent
    try:
        folder_info = os.stat(folder)
    except FileNotFoundError:
        raise OSError(errno.ENOENT, f"folder {folder} does not exist", str(path)) from None
    except NotADirectoryError:
        raise OSError(errno.ENOTDIR, f"folder {folder} does not exist", str(path)) from None
    if not stat.S_ISDIR(folder_info.st_mode):
        raise OSError(errno.ENOTDIR, f"folder {folder} does not exist", str(path))
    if not os.access(folder, os.W_OK):
        raise OSError(errno.EACCES, f"folder {folder} is not writable", str(path))
