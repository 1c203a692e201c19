"""Claims: one worker per piece of work across processes sharing a workspace (`memtrace verify`).

A claim is a row of `verify_claims` keyed by what is claimed (an attribution: run, case, method,
settings), taken inside one `BEGIN IMMEDIATE` transaction, so two processes never both take it.
The holder is a process: while it lives it holds an exclusive `flock` on
`<workspace>/claims/<holder>.lock` (the journal's way of telling a live writer from a dead one), so
a claim whose holder's lock is free belongs to a dead process and may be taken over, and the
caller is told when it was taken, to clean up what the dead holder left half done. A finished
claim keeps its finishing time: a pass that started before it skips the work (another process did
it meanwhile), a later pass may claim it again (`--refresh`).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .journal import create_locked
from .model import RUN_INCOMPLETE
from .runs import delete_run_in

if TYPE_CHECKING:
    from .store import Store

CLAIMS_DIR = "claims"
LOCK_SUFFIX = ".lock"

#: What a claim is on: (run, case id, method, settings key) of an attribution.
ClaimKey = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class StaleClaim:
    """A claim a dead process held: what it was on and since when (its half-done work is newer)."""

    key: ClaimKey
    holder: str
    claimed_at: float


class ClaimHolder:
    """This process as a claimant on one workspace: alive for others while it is open."""

    def __init__(self, workspace_dir: Path) -> None:
        self.directory = workspace_dir / CLAIMS_DIR
        self.directory.mkdir(parents=True, exist_ok=True)
        self.id = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._lock: IO[bytes] | None = create_locked(self.directory / f"{self.id}{LOCK_SUFFIX}")

    def close(self) -> None:
        """Stop being a claimant: the lock file goes (claims still held look like a dead holder's)."""
        if self._lock is not None:
            (self.directory / f"{self.id}{LOCK_SUFFIX}").unlink(missing_ok=True)
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ClaimHolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def holder_alive(workspace_dir: Path, holder: str) -> bool:
    """Whether the process `holder` still holds its lock (a missing or free lock file: it ended)."""
    path = workspace_dir / CLAIMS_DIR / f"{holder}{LOCK_SUFFIX}"
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    path.unlink(missing_ok=True)  # a dead holder's file: nobody will lock it again
    return False


def take_claim(
    store: Store, workspace_dir: Path, key: ClaimKey, holder: str, since: float
) -> tuple[bool, StaleClaim | None]:
    """(taken, the dead holder's claim it replaced). Not taken when a live process holds the claim,
    or one finished it at or after `since` (the start of this pass: the work was done meanwhile)."""
    now = time.time()
    with store.transaction() as conn:
        row = conn.execute(
            "SELECT holder, claimed_at, finished_at FROM verify_claims"
            " WHERE run=? AND case_id=? AND method=? AND settings_key=?",
            key,
        ).fetchone()
        stale = None
        if row is not None:
            other, claimed_at, finished_at = row
            if finished_at is not None and finished_at >= since:
                return False, None
            if finished_at is None and other != holder:
                if holder_alive(workspace_dir, other):
                    return False, None
                stale = StaleClaim(key, other, claimed_at)
        _write(conn, key, holder, now)
    return True, stale


def finish_claim(store: Store, key: ClaimKey, holder: str) -> None:
    """The work is done (and saved): the claim stays, with the time, for passes already running."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE verify_claims SET finished_at=? WHERE run=? AND case_id=? AND method=? AND settings_key=?"
            " AND holder=?",
            (time.time(), *key, holder),
        )


def release_claims(store: Store, holder: str) -> None:
    """Give back every unfinished claim of `holder` (its work stopped): another process may take them."""
    with store.transaction() as conn:
        conn.execute("DELETE FROM verify_claims WHERE holder=? AND finished_at IS NULL", (holder,))


def stale_claims(store: Store, workspace_dir: Path) -> list[StaleClaim]:
    """Unfinished claims whose holder process has ended, each removed as it is returned."""
    found = []
    with store.transaction() as conn:
        rows = conn.execute(
            "SELECT run, case_id, method, settings_key, holder, claimed_at FROM verify_claims"
            " WHERE finished_at IS NULL"
        ).fetchall()
        alive: dict[str, bool] = {}
        for *key, holder, claimed_at in rows:
            if holder not in alive:
                alive[holder] = holder_alive(workspace_dir, holder)
            if not alive[holder]:
                claim_key: ClaimKey = (key[0], key[1], key[2], key[3])
                found.append(StaleClaim(claim_key, holder, claimed_at))
                conn.execute(
                    "DELETE FROM verify_claims WHERE run=? AND case_id=? AND method=? AND settings_key=?"
                    " AND holder=?",
                    (*claim_key, holder),
                )
    return found


def remove_orphan_replays(store: Store, stale: StaleClaim) -> list[str]:
    """Delete the replays a dead holder left half recorded for its claim: runs of the claimed run
    (`parent_run`) started since the claim whose recording never closed (`incomplete`) and that no
    attribution names. A live process's replay is still `running` or already complete: never these."""
    with store.transaction() as conn:
        orphans = [
            run_id
            for (run_id,) in conn.execute(
                "SELECT id FROM runs WHERE parent_run=? AND status=? AND created_at>=?"
                " AND id NOT IN (SELECT replay_run FROM attributions WHERE replay_run IS NOT NULL)",
                (stale.key[0], RUN_INCOMPLETE, stale.claimed_at),
            )
        ]
        for run_id in orphans:
            delete_run_in(conn, run_id)
    return orphans


def _write(conn: sqlite3.Connection, key: ClaimKey, holder: str, at: float) -> None:
    """The claim is `holder`'s from `at` on, unfinished (a new row, or one taken over)."""
    conn.execute(
        "INSERT INTO verify_claims(run, case_id, method, settings_key, holder, claimed_at, finished_at)"
        " VALUES (?, ?, ?, ?, ?, ?, NULL) ON CONFLICT(run, case_id, method, settings_key) DO UPDATE SET"
        " holder=excluded.holder, claimed_at=excluded.claimed_at, finished_at=NULL",
        (*key, holder, at),
    )
