"""Signed pickles: snapshots are pickles, and loading a pickle runs code, so only this workspace's own load.

Each file carries an HMAC-SHA256 of its bytes under a per-workspace key (`<workspace>/.snapshot-key`,
created with mode 0600); a file without a valid signature is refused before it is unpickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import secrets
from pathlib import Path
from typing import Any

from ..errors import MemtraceError, UntrustedSnapshotError

KEY_FILENAME = ".snapshot-key"
_MAGIC = b"memtrace-signed-pickle-1\n"
_DIGEST_SIZE = hashlib.sha256().digest_size


def workspace_key(workspace: str | Path, *, create: bool = True) -> bytes:
    """The workspace's signing key, created (0600, atomically) the first time a snapshot is written."""
    path = Path(workspace) / KEY_FILENAME
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            raise UntrustedSnapshotError(
                f"{path}: missing, so no snapshot of this workspace can be trusted; re-record the run"
                " to replay it"
            ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f"{KEY_FILENAME}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):  # another process made the key first: use theirs
            os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    key = path.read_bytes()
    if len(key) < 32:
        raise MemtraceError(f"{path}: snapshot key is too short; delete it and the snapshots folder")
    return key


def dump_signed(value: Any, path: Path, key: bytes) -> None:
    """Pickle `value` into `path` with a signature under `key`."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    signature = hmac.new(key, data, hashlib.sha256).digest()
    path.write_bytes(_MAGIC + signature + data)


def load_signed(path: Path, key: bytes) -> Any:
    """Unpickle `path` only if its signature matches `key`; else raise UntrustedSnapshotError."""
    raw = path.read_bytes()
    header = len(_MAGIC) + _DIGEST_SIZE
    signature, data = raw[len(_MAGIC) : header], raw[header:]
    expected = hmac.new(key, data, hashlib.sha256).digest()
    if not raw.startswith(_MAGIC) or not hmac.compare_digest(signature, expected):
        raise UntrustedSnapshotError(
            f"{path}: snapshot is unsigned or was changed after it was recorded; refusing to load it"
            " (loading could run code). Re-record the run to replay it."
        )
    return pickle.loads(data)
