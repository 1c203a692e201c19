"""System-state snapshots saved while a run records, so a replay restarts near its patch.

A snapshot is the system's state (its memory store and indexes, pickled without its model client
or recorder) at a point between two operations, marked by a seq that no row uses: every row
before it belongs to the past, every row after it to the future. Files live beside the journal:
`<workspace>/snapshots/<run>/<label>.pkl`, plus the conversation itself as JSON (data, never code),
so a replay needs neither the dataset file nor the original process. Every pickle is signed with
the user's key (signing.py, kept outside the workspace); one that is unsigned, changed or signed by
any other key is refused before it is unpickled and left out, with one warning line, so the replay
re-runs from the last snapshot it can trust, or from the first message.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..errors import NotReplayableError, UntrustedSnapshotError
from ..trace import Recorder
from .base import MemorySystem
from .conversation_json import conversation_from_json, conversation_to_json
from .signing import (
    dump_signed,
    load_signed,
    sign_data,
    signed_by,
    signed_data,
    user_key,
    user_key_path,
)

SNAPSHOT_DIR = "snapshots"
TRANSIENT = ("run", "llm", "conversation")
CONVERSATION_JSON = "conversation.json"
#: The conversation as older versions kept it (a signed pickle): read only when signed by the user.
CONVERSATION_PICKLE = "conversation.pkl"

_log = logging.getLogger("memtrace")
#: The snapshot folders whose refusal was already said (with how many were refused).
_WARNED: set[tuple[Path, int]] = set()
#: A worker's rebuilt snapshot folders: the driver already said what it refused of them.
_SAID_BY_DRIVER: set[Path] = set()


def snapshot_dir(workspace: str | Path, run_id: str) -> Path:
    return Path(workspace) / SNAPSHOT_DIR / run_id


@dataclass(slots=True)
class Snapshot:
    label: str
    seq: int  # the marker: rows with a smaller seq happened before the snapshot
    next_session: int  # the session construction resumes at
    path: Path
    key: bytes  # the user's signing key: a file it did not sign is refused

    def state(self) -> dict[str, Any]:
        return load_signed(self.path, self.key)["state"]


class SnapshotWriter:
    """Saves snapshots of one run's system as it records."""

    def __init__(self, workspace: str | Path, run: Recorder, conversation: Conversation) -> None:
        self.run = run
        self.directory = snapshot_dir(workspace, run.id)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key = user_key()
        text = conversation_to_json(conversation)
        if text is not None:
            (self.directory / CONVERSATION_JSON).write_text(text)
        else:  # metadata JSON cannot hold exactly: a signed pickle, as before
            dump_signed(conversation, self.directory / CONVERSATION_PICKLE, self.key)

    def save(self, system: MemorySystem, label: str, next_session: int) -> None:
        marker = self.run.next_seq()  # consumed: no row will carry it
        state = {k: v for k, v in system.__dict__.items() if k not in TRANSIENT}
        payload = {"label": label, "seq": marker, "next_session": next_session, "state": state}
        dump_signed(payload, self.directory / f"{label}.pkl", self.key)
        # A small index, so finding the right snapshot does not unpickle every state.
        with open(self.directory / "index.jsonl", "a") as handle:
            handle.write(json.dumps({"label": label, "seq": marker, "next_session": next_session}) + "\n")


class MarkerWriter:
    """Takes no snapshot, but spends the seq the recording spent on each one before `upto`: a replay
    that re-runs construction past a snapshot it could not trust keeps every later operation's id
    (`name#seq`), so a patch keyed by one still finds it."""

    def __init__(self, run: Recorder, markers: dict[str, int], upto: int) -> None:
        self.run, self.markers, self.upto = run, markers, upto

    def save(self, system: MemorySystem, label: str, next_session: int) -> None:
        if self.markers.get(label, self.upto) < self.upto:
            self.run.next_seq()


def _warn_refused(run_id: str, directory: Path, refused: int, *, earlier: bool) -> None:
    """One line, once per process and folder: a verify replays a run many times."""
    if (directory, refused) in _WARNED:
        return
    _WARNED.add((directory, refused))
    _log.warning(
        "memtrace: run %s: %d snapshot(s) in %s are not signed by your key (%s) and were not loaded"
        " (loading could run code); replaying from %s",
        run_id,
        refused,
        directory,
        user_key_path(),
        "an earlier snapshot" if earlier else "the first message",
    )


def snapshot_markers(workspace: str | Path, run_id: str) -> dict[str, int]:
    """Each snapshot's label and marker seq as the recording wrote them (trusted or not: data only)."""
    index = snapshot_dir(workspace, run_id) / "index.jsonl"
    lines = index.read_text().splitlines() if index.exists() else []
    return {meta["label"]: int(meta["seq"]) for meta in map(json.loads, lines)}


def load_snapshots(workspace: str | Path, run_id: str) -> tuple[Conversation, list[Snapshot]]:
    """The conversation of a run and the snapshots signed with the user's key, oldest first.

    A snapshot signed by any other key is left out (one warning line): the replay starts from an
    earlier one, or from the first message. Without a conversation it can trust, it cannot replay.
    """
    directory = snapshot_dir(workspace, run_id)
    conversation = _conversation(directory, run_id)
    index = directory / "index.jsonl"
    lines = index.read_text().splitlines() if index.exists() else []
    key = _key_if_any() if lines else None
    snapshots, refused = [], []
    for line in lines:
        meta = json.loads(line)
        path = directory / f"{meta['label']}.pkl"
        snapshot = Snapshot(meta["label"], meta["seq"], meta["next_session"], path, key or b"")
        trusted = key is not None and path.is_file() and signed_by(path, key)
        (snapshots if trusted else refused).append(snapshot)
    if refused and directory not in _SAID_BY_DRIVER:
        _warn_refused(run_id, directory, len(refused), earlier=bool(snapshots))
    return conversation, sorted(snapshots, key=lambda s: s.seq)


@dataclass(slots=True)
class SnapshotFiles:
    """A run's snapshot folder as data, for a worker that holds no key of the user's: the files sent as
    they are, and the pickles the user's key signed, without their signatures (signed again there)."""

    plain: dict[str, bytes]
    trusted: dict[str, bytes]


def snapshot_files(workspace: str | Path, run_id: str) -> SnapshotFiles:
    """Read run `run_id`'s snapshot folder; a pickle not signed by the user's key stays as it is, so a
    worker refuses it just as `load_snapshots` here would."""
    directory = snapshot_dir(workspace, run_id)
    paths = sorted(p for p in directory.iterdir() if p.is_file()) if directory.is_dir() else []
    key = _key_if_any() if any(p.suffix == ".pkl" for p in paths) else None
    files = SnapshotFiles({}, {})
    for path in paths:
        data = signed_data(path, key) if key is not None and path.suffix == ".pkl" else None
        if data is not None:
            files.trusted[path.name] = data
        else:
            files.plain[path.name] = path.read_bytes()
    refused = [name for name in files.plain if name.endswith(".pkl") and name != "conversation.pkl"]
    if refused:  # said here, naming the user's folder, not by each worker about its scratch copy
        _warn_refused(
            run_id, directory, len(refused), earlier=any(n != "conversation.pkl" for n in files.trusted)
        )
    return files


def write_snapshot_files(workspace: str | Path, run_id: str, files: SnapshotFiles, key: bytes) -> None:
    """Rebuild a snapshot folder from `snapshot_files` in a scratch workspace, trusted pickles signed
    under `key` (the task's: signing.task_key)."""
    directory = snapshot_dir(workspace, run_id)
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.plain.items():
        (directory / name).write_bytes(data)
    for name, data in files.trusted.items():
        sign_data(data, directory / name, key)
    _SAID_BY_DRIVER.add(directory)


def _key_if_any() -> bytes | None:
    """The user's key, or None when this user never recorded a snapshot (then none is trusted)."""
    try:
        return user_key(create=False)
    except UntrustedSnapshotError:
        return None


def _conversation(directory: Path, run_id: str) -> Conversation:
    """The run's conversation: JSON (data), else an older version's pickle if the user signed it."""
    as_json = directory / CONVERSATION_JSON
    if as_json.is_file():
        return conversation_from_json(as_json.read_text(), str(as_json))
    pickled = directory / CONVERSATION_PICKLE
    if not pickled.is_file():
        raise NotReplayableError(
            f"{directory}: run {run_id} has no snapshots (imported, or recorded without the runner)"
        )
    try:
        return load_signed(pickled, user_key(create=False))
    except UntrustedSnapshotError:
        raise UntrustedSnapshotError(
            f"{pickled}: run {run_id} cannot be replayed: its conversation is a pickle not signed by your"
            f" key ({user_key_path()}), so it was not loaded (loading could run code). If you recorded it"
            " with an older memtrace, set MEMTRACE_SNAPSHOT_KEY_FILE to that workspace's .snapshot-key"
        ) from None


def restore(system: MemorySystem, snapshot: Snapshot, run: Recorder, conversation: Conversation) -> None:
    """Put a system back into the state a snapshot holds, recording into `run`."""
    system.__dict__.update(snapshot.state())
    system.run = run
    system.conversation = conversation
