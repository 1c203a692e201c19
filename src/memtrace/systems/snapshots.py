"""System-state snapshots saved while a run records, so a replay restarts near its patch.

A snapshot is the system's state (its memory store and indexes, pickled without its model client
or recorder) at a point between two operations, marked by a seq that no row uses: every row
before it belongs to the past, every row after it to the future. Files live beside the journal:
`<workspace>/snapshots/<run>/<label>.pkl`, plus the conversation itself, so a replay needs neither
the dataset file nor the original process. Every pickle is signed with the workspace's key (signing.py)
and refused unsigned or changed, since unpickling a file runs code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..errors import NotReplayableError
from ..trace import Recorder
from .base import MemorySystem
from .signing import dump_signed, load_signed, workspace_key

SNAPSHOT_DIR = "snapshots"
TRANSIENT = ("run", "llm", "conversation")


def snapshot_dir(workspace: str | Path, run_id: str) -> Path:
    return Path(workspace) / SNAPSHOT_DIR / run_id


@dataclass(slots=True)
class Snapshot:
    label: str
    seq: int  # the marker: rows with a smaller seq happened before the snapshot
    next_session: int  # the session construction resumes at
    path: Path
    key: bytes  # the workspace's signing key: an unsigned or changed file is refused

    def state(self) -> dict[str, Any]:
        return load_signed(self.path, self.key)["state"]


class SnapshotWriter:
    """Saves snapshots of one run's system as it records."""

    def __init__(self, workspace: str | Path, run: Recorder, conversation: Conversation) -> None:
        self.run = run
        self.directory = snapshot_dir(workspace, run.id)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key = workspace_key(workspace)
        dump_signed(conversation, self.directory / "conversation.pkl", self.key)

    def save(self, system: MemorySystem, label: str, next_session: int) -> None:
        marker = self.run.next_seq()  # consumed: no row will carry it
        state = {k: v for k, v in system.__dict__.items() if k not in TRANSIENT}
        payload = {"label": label, "seq": marker, "next_session": next_session, "state": state}
        dump_signed(payload, self.directory / f"{label}.pkl", self.key)
        # A small index, so finding the right snapshot does not unpickle every state.
        with open(self.directory / "index.jsonl", "a") as handle:
            handle.write(json.dumps({"label": label, "seq": marker, "next_session": next_session}) + "\n")


def load_snapshots(workspace: str | Path, run_id: str) -> tuple[Conversation, list[Snapshot]]:
    """The conversation of a run and its snapshots, oldest first."""
    directory = snapshot_dir(workspace, run_id)
    conversation_file = directory / "conversation.pkl"
    if not conversation_file.exists():
        raise NotReplayableError(
            f"{directory}: run {run_id} has no snapshots (imported, or recorded without the runner)"
        )
    key = workspace_key(workspace, create=False)
    conversation = load_signed(conversation_file, key)
    snapshots = []
    index = directory / "index.jsonl"
    for line in index.read_text().splitlines() if index.exists() else []:
        meta = json.loads(line)
        snapshots.append(
            Snapshot(
                meta["label"], meta["seq"], meta["next_session"], directory / f"{meta['label']}.pkl", key
            )
        )
    return conversation, sorted(snapshots, key=lambda s: s.seq)


def restore(system: MemorySystem, snapshot: Snapshot, run: Recorder, conversation: Conversation) -> None:
    """Put a system back into the state a snapshot holds, recording into `run`."""
    system.__dict__.update(snapshot.state())
    system.run = run
    system.conversation = conversation
