"""Signed pickles: a system's state snapshot is a pickle, and loading a pickle runs code, so only a
snapshot signed with the user's own key is ever loaded.

The key belongs to the user, not to the workspace: `$MEMTRACE_SNAPSHOT_KEY_FILE`, else
`$XDG_CONFIG_HOME/memtrace/snapshot-key`, else `~/.config/memtrace/snapshot-key`, created (mode 0600,
atomically) the first time a snapshot is written. A workspace folder made by someone else may carry
a key of its own (older versions kept one in `<workspace>/.snapshot-key`); it is never read, so
whoever supplies a folder cannot supply a signature that passes. Each file carries an HMAC-SHA256
of its bytes; a file without a valid signature under the user's key is refused before it is
unpickled. To trust a workspace of one's own made by an older version, point
MEMTRACE_SNAPSHOT_KEY_FILE at its `.snapshot-key` for that command.

A worker replaying in a scratch workspace (attribution/verify_tasks.py) never holds the user's key:
the driver sends the pickles its key signed, stripped of their signatures, and the worker signs them
again under a key of its own for the duration of the task (`task_key`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import secrets
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..errors import MemtraceError, UntrustedSnapshotError

#: The environment variable naming the key file (tests, or trusting an older workspace's key).
KEY_ENV = "MEMTRACE_SNAPSHOT_KEY_FILE"
#: Where older versions kept the key: inside the workspace, which is why it is ignored now.
LEGACY_KEY_FILENAME = ".snapshot-key"
_MAGIC = b"memtrace-signed-pickle-1\n"
_DIGEST_SIZE = hashlib.sha256().digest_size
#: The key a task signs and trusts with in place of the user's (`task_key`); None: the user's.
_TASK_KEY: ContextVar[bytes | None] = ContextVar("memtrace_task_key", default=None)


def user_key_path() -> Path:
    """The file holding this user's snapshot key (it need not exist yet)."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config) if config and Path(config).is_absolute() else Path.home() / ".config"
    return base / "memtrace" / "snapshot-key"


def user_key(*, create: bool = True) -> bytes:
    """The user's signing key, created (0600, atomically) the first time a snapshot is written; inside
    `task_key(key)`, that key."""
    task = _TASK_KEY.get()
    if task is not None:
        return task
    path = user_key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            raise UntrustedSnapshotError(
                f"{path}: no snapshot key, so no snapshot can be trusted (snapshots are signed with the"
                " key of the user who recorded them)"
            ) from None
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    draft = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):  # another process made the key first: use theirs
            os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)
    return _read_key(path)


@contextlib.contextmanager
def task_key(key: bytes) -> Iterator[None]:
    """Sign and trust with `key` instead of the user's key inside the block (this thread): a worker's
    scratch workspace, holding pickles the driver checked under the user's key before sending them."""
    if len(key) < 32:
        raise ValueError("a task key has at least 32 bytes")
    token = _TASK_KEY.set(key)
    try:
        yield
    finally:
        _TASK_KEY.reset(token)


def _read_key(path: Path) -> bytes:
    status = path.stat()
    if status.st_mode & 0o077 or status.st_uid != os.getuid():
        raise MemtraceError(
            f"{path}: the snapshot key must be yours and readable by you alone (chmod 600 {path}):"
            " anyone who can read it can make snapshots that run code when you replay"
        )
    key = path.read_bytes()
    if len(key) < 32:
        raise MemtraceError(f"{path}: snapshot key is too short; delete it and record the runs again")
    return key


def dump_signed(value: Any, path: Path, key: bytes) -> None:
    """Pickle `value` into `path` with a signature under `key`."""
    sign_data(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), path, key)


def sign_data(data: bytes, path: Path, key: bytes) -> None:
    """Write already pickled `data` into `path`, signed under `key` (`signed_data`'s counterpart)."""
    signature = hmac.new(key, data, hashlib.sha256).digest()
    path.write_bytes(_MAGIC + signature + data)


def signed_data(path: Path, key: bytes) -> bytes | None:
    """The pickled bytes of `path` when it is signed under `key` (nothing is unpickled), else None."""
    return _verified(path.read_bytes(), key)


def signed_by(path: Path, key: bytes) -> bool:
    """Whether `path` is a signed pickle whose signature matches `key` (nothing is unpickled)."""
    return _verified(path.read_bytes(), key) is not None


def load_signed(path: Path, key: bytes) -> Any:
    """Unpickle `path` only if its signature matches `key`; else raise UntrustedSnapshotError."""
    data = _verified(path.read_bytes(), key)
    if data is None:
        raise UntrustedSnapshotError(
            f"{path}: snapshot is unsigned, changed, or signed by a key other than yours"
            f" ({user_key_path()}); refusing to load it (loading could run code)"
        )
    return pickle.loads(data)


def _verified(raw: bytes, key: bytes) -> bytes | None:
    """The pickled bytes of a signed file when its signature matches `key`, else None."""
    header = len(_MAGIC) + _DIGEST_SIZE
    signature, data = raw[len(_MAGIC) : header], raw[header:]
    expected = hmac.new(key, data, hashlib.sha256).digest()
    if not raw.startswith(_MAGIC) or not hmac.compare_digest(signature, expected):
        return None
    return data
