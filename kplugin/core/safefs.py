"""Every file kplugin reads from a user or writes for one goes through here.

kplugin runs in CI on pull requests, so a project's files, kplugin.yaml included, are
input from strangers. The rules:

- Inputs are read only from regular files, with a size limit, without blocking (a FIFO
  or a device is refused before it is opened for good), and decoded as strict UTF-8:
  a problem is a UsageError naming the file (and the byte offset of bad text).
- A path inside a project comes from a relative name: absolute names, ``..`` and
  symlinked directories on the way are refused (``inside``), so nothing a project file
  says can make kplugin read, write or delete outside the project root.
- Updates are all-or-nothing (``Transaction``): every destination is checked before
  the first write, each replaced or deleted file is moved aside first, and whatever
  was already moved is put back when a later step fails.
- Output files (``-o``, ``--merge``) are replaced atomically; a symlink is followed and
  kept, and a directory, device or FIFO is never replaced.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath

from kplugin.core.errors import OperationError, Setting, UsageError

# Limits on what kplugin parses: far above any real file of each kind, far below what
# would take seconds or gigabytes.
SMALL_FILE = 1 << 20  # kplugin.yaml, --args, scheduler configurations, manifests
# scenarios (5,000 nodes and 50,000 pods fit): ruamel.yaml builds about 0.3 MB/s of YAML
# here, so the 256 MB this was would take a quarter of an hour to read
LARGE_FILE = 4 << 20


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def _open_regular(path: Path, what: str, limit: int, name: object) -> int:
    """A read-only descriptor of the regular file ``path`` of at most ``limit`` bytes."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{what} {name}: no such file") from None
    except NotADirectoryError:
        raise UsageError(f"{what} {name}: a part of the path is not a directory") from None
    except OSError as err:
        raise UsageError(f"{what} {name}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{what} {name} is {_kind(info.st_mode)}, not a regular file; give a file")
    if info.st_size > limit:
        raise UsageError(f"{what} {name} is {info.st_size} bytes; kplugin reads at most {limit} bytes here")
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat does not hang the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise UsageError(f"{what} {name}: {err.strerror or err}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"{what} {name} is not a regular file; give a file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path, what: str, limit: int = SMALL_FILE, *, shown: object = None) -> bytes:
    """The bytes of the regular file ``path``; ``what`` names it in errors (e.g.
    ``--args``), ``shown`` is the name to print (default: the path)."""
    name = path if shown is None else shown
    fd = _open_regular(path, what, limit, name)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as err:
        raise UsageError(f"{what} {name}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise UsageError(f"{what} {name} is larger than {limit} bytes, the most kplugin reads here")
    return b"".join(chunks)


@contextmanager
def open_input(path: Path, what: str, limit: int) -> Iterator[Capped]:
    """The regular file ``path`` opened for reading as a stream (checked as read_bytes
    checks it), for inputs too big to hold; reading stops at ``limit`` bytes."""
    fd = _open_regular(path, what, limit, path)
    with os.fdopen(fd, "rb") as raw:
        yield Capped(raw, limit, f"{what} {path} is larger than {limit} bytes, the most kplugin reads here")


class Capped:
    """A binary reader that refuses to go past ``limit`` bytes (a file that grew after
    the stat)."""

    def __init__(self, raw: io.BufferedReader, limit: int, message: str) -> None:
        self._inner = raw
        self._left = limit
        self._message = message

    def read(self, size: int = -1, /) -> bytes:
        data = self._inner.read(size if size >= 0 else self._left + 1)
        self._left -= len(data)
        if self._left < 0:
            raise UsageError(self._message)
        return data

    def size(self) -> int:
        return os.fstat(self._inner.fileno()).st_size


def decode(data: bytes, what: str, name: object) -> str:
    """Strict UTF-8 (a BOM is dropped); bad bytes are a UsageError with their offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UsageError(
            f"{what} {name} is not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start}); save it as UTF-8"
        ) from None


def read_text(path: Path, what: str, limit: int = SMALL_FILE, *, shown: object = None) -> str:
    return decode(read_bytes(path, what, limit, shown=shown), what, path if shown is None else shown)


# --- paths inside a project ------------------------------------------------------


def relative_problem(name: str) -> str | None:
    """Why ``name`` is not a plain relative path inside a directory, or None."""
    if not name or "\x00" in name or "\\" in name:
        return "is empty or has a NUL or backslash"
    path = PurePosixPath(name)
    if path.is_absolute():
        return "is an absolute path"
    if any(part in {"..", "."} for part in name.split("/")) or "" in name.split("/"):
        return "has '..', '.' or an empty part"
    return None


def inside(root: Path, relative: str | PurePosixPath, what: str = "path") -> Path:
    """``root/relative``, refusing anything that would lead out of ``root``: an absolute
    name, ``..``, or a symlink on the way (the last part may be anything; callers check
    it with ``lstat``)."""
    name = PurePosixPath(relative).as_posix() if isinstance(relative, PurePosixPath) else relative
    problem = relative_problem(name)
    if problem:
        raise UsageError(f"{what} {name!r} {problem}; only paths inside the project are allowed")
    current = root
    parts = name.split("/")
    for part in parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return root.joinpath(*parts)
        except NotADirectoryError:
            raise UsageError(f"{what} {name!r}: {current} is not a directory") from None
        if stat.S_ISLNK(mode):
            raise UsageError(
                f"{what} {name!r} leads through the symlink {current}; kplugin does not follow links in a project"
            )
        if not stat.S_ISDIR(mode):
            raise UsageError(f"{what} {name!r}: {current} is a file where a directory is needed")
    return root.joinpath(*parts)


def lstat_mode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_project_file(root: Path, relative: str | PurePosixPath, limit: int = SMALL_FILE * 16) -> bytes | None:
    """A project file's bytes, or None when it is missing. A symlink, directory or
    special file there is a UsageError (kplugin reads only regular files it owns)."""
    path = inside(root, relative)
    mode = lstat_mode(path)
    if mode is None:
        return None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path} is {_kind(mode)} where kplugin keeps a file; replace it with a regular file")
    return read_bytes(path, "project file", limit)


def check_writable_target(root: Path, relative: str | PurePosixPath, *, replace: bool = True) -> Path:
    """The destination of a file kplugin will create or replace under ``root``: every
    directory on the way real (no symlinks) or creatable, and an existing file there a
    writable regular file. Returns the path."""
    path = inside(root, relative, "destination")
    mode = lstat_mode(path)
    if mode is None:
        return path
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"{path} is {_kind(mode)} where kplugin writes a file; move it away (kplugin never replaces it)"
        )
    if not replace:
        raise UsageError(f"{path} exists; pass {Setting.FORCE} to overwrite it")
    if not mode & stat.S_IWUSR:
        raise UsageError(f"{path} is read-only; make it writable (chmod u+w) or move it away")
    return path


# --- output files -----------------------------------------------------------------


def output_target(path: Path, what: str, *, force: bool, must_exist: bool = False) -> Path:
    """Where writing the output ``path`` really goes: a symlink's target (the link is
    kept). A directory, device, FIFO or socket is refused; an existing file needs
    ``force`` unless ``must_exist`` (an update in place)."""
    real = Path(os.path.realpath(path))
    try:
        info = os.stat(real)
    except FileNotFoundError:
        if must_exist:
            raise UsageError(f"{what} {path}: no such file") from None
        if not real.parent.is_dir():
            raise UsageError(f"{what} {path}: directory {real.parent} does not exist") from None
        return real
    except NotADirectoryError:
        raise UsageError(f"{what} {path}: a part of the path is not a directory") from None
    except OSError as err:  # a symlink loop (ELOOP), a name too long, no permission
        raise UsageError(f"{what} {path}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{what} {path} is {_kind(info.st_mode)}; kplugin only writes regular files")
    if not must_exist and not force:
        raise UsageError(f"{what} {path} exists; pass {Setting.FORCE} to overwrite it")
    return real


def output_directory(path: Path, what: str) -> Path:
    """Where a new output directory goes (its files written by ``publish_directory``): it
    must not exist yet, or be empty; its parent must exist. A symlink's target is used."""
    real = Path(os.path.realpath(path))
    try:
        info = os.stat(real)
    except FileNotFoundError:
        if not real.parent.is_dir():
            raise UsageError(f"{what} {path}: directory {real.parent} does not exist") from None
        return real
    except NotADirectoryError:
        raise UsageError(f"{what} {path}: a part of the path is not a directory") from None
    except OSError as err:
        raise UsageError(f"{what} {path}: {err.strerror or err}") from None
    if not stat.S_ISDIR(info.st_mode):
        kind = "a file" if stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
        raise UsageError(f"{what} {path} is {kind}; give a new or empty directory")
    if any(real.iterdir()):
        raise UsageError(f"{what} {path} is not empty; give a new or empty directory")
    return real


def publish_directory(stage: Path, target: Path) -> None:
    """Put the directory ``stage`` (made by ``make_stage`` beside ``target``) in place of
    ``target``, which does not exist or is an empty directory: all its files at once."""
    try:
        os.replace(stage, target)
    except OSError as err:
        remove_tree(stage)
        raise OperationError(f"{target}: {err.strerror or err}") from None


def write_atomic(path: Path, content: bytes) -> None:
    """Replace the regular file ``path`` (already resolved by ``output_target``) through a
    temporary file beside it; the old file's mode is kept, a new one gets the umask's."""
    with atomic_writer(path) as handle:
        handle.write(content)


@contextmanager
def atomic_writer(path: Path, new_mode: int | None = None) -> Iterator[io.BufferedWriter]:
    """Write the regular file ``path`` (resolved by ``output_target``) as a stream: into
    a temporary file beside it, which replaces it when the block ends, and is removed
    when the block fails (Ctrl-C too). For outputs too big to build in memory. The old
    file's mode is kept; a new one gets ``new_mode`` whatever the umask (0600 for what
    only its owner may read: the temporary file is 0600 from the start), else the umask's."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as err:
        raise OperationError(f"writing {path}: {err.strerror or err}") from err
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        mode = lstat_mode(path)
        fresh = new_mode if new_mode is not None else 0o666 & ~current_umask()
        os.chmod(tmp, (mode & 0o7777) if mode is not None else fresh)
        os.replace(tmp, path)
    except OSError as err:
        with suppress(OSError):
            os.unlink(tmp)
        raise OperationError(f"writing {path}: {err.strerror or err}") from err
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_stage(parent: Path, name: str) -> Path:
    """A temporary directory beside ``parent/name`` (same file system, so renames into
    place are atomic), with the mode a plain mkdir would give it."""
    stage = Path(tempfile.mkdtemp(prefix=f".{name}.kplugin-", dir=parent))
    os.chmod(stage, 0o777 & ~current_umask())
    return stage


def remove_tree(path: Path) -> None:
    """Remove a directory tree, ignoring errors as ``shutil.rmtree(ignore_errors=True)``
    does, but without recursion (shutil's recurses: a tree deeper than Python's recursion
    limit, copied from a hostile project, would be a RecursionError and stay behind)."""
    stack: list[tuple[Path, bool]] = [(path, False)]
    while stack:
        current, emptied = stack.pop()
        if emptied:
            with suppress(OSError):
                os.rmdir(current)
            continue
        try:
            with os.scandir(current) as scan:
                entries = list(scan)
        except NotADirectoryError:
            with suppress(OSError):
                os.unlink(current)
            continue
        except OSError:
            continue
        stack.append((current, True))
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), False))
            else:
                with suppress(OSError):
                    os.unlink(entry.path)


# --- all-or-nothing updates -------------------------------------------------------


class Transaction:
    """Moves staged files into a tree so that either all of them land or none do.

    Each file that is replaced or deleted is first moved aside into ``backup`` (a
    directory on the same file system); ``rollback`` puts everything back in reverse
    order and removes what was created."""

    def __init__(self, root: Path, backup: Path) -> None:
        self.root = root
        self.backup = backup
        self._done: list[tuple[Path, Path | None, list[Path]]] = []  # (target, moved-aside copy, dirs made)
        self._count = 0

    def _aside(self, target: Path) -> Path | None:
        if lstat_mode(target) is None:
            return None
        self._count += 1
        saved = self.backup / f"{self._count}"
        self.backup.mkdir(parents=True, exist_ok=True)
        os.replace(target, saved)
        return saved

    def _make_parents(self, target: Path) -> list[Path]:
        made = []
        for parent in reversed(target.parents):
            if parent == self.root or self.root not in parent.parents:
                continue
            if lstat_mode(parent) is None:
                parent.mkdir()
                made.append(parent)
        return made

    def put(self, source: Path, relative: PurePosixPath) -> None:
        target = inside(self.root, relative)
        try:
            made = self._make_parents(target)
            saved = self._aside(target)
            self._done.append((target, saved, made))
            os.replace(source, target)
        except OSError as err:
            raise OperationError(f"writing {target}: {err.strerror or err}") from err

    def delete(self, relative: PurePosixPath) -> None:
        target = inside(self.root, relative)
        try:
            saved = self._aside(target)
        except OSError as err:
            raise OperationError(f"removing {target}: {err.strerror or err}") from err
        if saved is not None:
            self._done.append((target, saved, []))

    def rollback(self) -> None:
        for target, saved, made in reversed(self._done):
            with suppress(OSError):
                if saved is not None:
                    os.replace(saved, target)
                elif lstat_mode(target) is not None:
                    os.unlink(target)
            for directory in reversed(made):
                with suppress(OSError):
                    directory.rmdir()
        self._done.clear()

    def finish(self) -> None:
        shutil.rmtree(self.backup, ignore_errors=True)
        self._done.clear()


@contextmanager
def transaction(root: Path, backup: Path) -> Iterator[Transaction]:
    """A Transaction that rolls back when the block fails (KeyboardInterrupt included)."""
    tx = Transaction(root, backup)
    try:
        yield tx
    except BaseException:
        tx.rollback()
        raise
    tx.finish()


@contextmanager
def locked(directory: Path, what: str) -> Iterator[None]:
    """An exclusive lock on ``directory`` for the length of an update; a second kplugin
    changing the same place fails at once instead of mixing its files in."""
    import fcntl

    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise OperationError(f"cannot lock {directory}: {err.strerror or err}") from err
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno in {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}:
                raise OperationError(
                    f"another kplugin is {what} in {directory}; wait for it to finish and run this again"
                ) from None
            raise
        yield
    finally:
        os.close(fd)
