"""One verifier per claim: `memtrace verify` processes sharing a workspace split its attributions.

Before replaying an attribution a verifier takes its claim (graph/claims.py: a row taken in one
transaction, held by a live process); an attribution another live verifier holds, or finished
since this pass began, is skipped, so two processes never replay a claim twice. A verifier that
died (killed, crashed) leaves its claims unfinished and its replay run half recorded: the next
verifier takes such claims over, deletes those orphaned replays, and verifies the claims again.

A claim's replays get ids derived from the claim (`replay_seed`), so the runs a verification stores
are the same whichever process, and however many workers, made them.
"""

from __future__ import annotations

import json
import logging
import time

from ...graph import Store, Workspace
from ...graph.claims import (
    ClaimHolder,
    ClaimKey,
    StaleClaim,
    finish_claim,
    release_claims,
    remove_orphan_replays,
    stale_claims,
    take_claim,
)
from ...systems.replay import ReplayIds
from ..model import Attribution, load_attributions

_log = logging.getLogger("memtrace")


def claim_key(attribution: Attribution) -> ClaimKey:
    """What a claim is on: the attribution's row (run, case, method, settings)."""
    return (attribution.run_id, attribution.case_id, attribution.method, attribution.settings_key or "")


def to_verify(
    ws: Workspace, method: str, runs: list[str] | None, limit: int | None, refresh: bool
) -> list[Attribution]:
    """A method's stored attributions (of `runs` when given) this pass verifies, in store order: those
    not verified yet or verified by another verifier (all with `refresh`), at most `limit`."""
    chosen = None if runs is None else {ws.run(ref).id for ref in runs}
    return [
        a
        for a in load_attributions(ws.store, method=method)
        if (refresh or a.verified is None or a.verdict_stale) and (chosen is None or a.run_id in chosen)
    ][:limit]


def replay_seed(store: Store, attribution: Attribution) -> str:
    """What the ids of a claim's replays derive from: the claim, and how many times it was replayed
    before (`--refresh`), so a new verification never reuses an earlier one's run id."""
    key = claim_key(attribution)
    generation = 0
    while store.has_run(ReplayIds(json.dumps([*key, generation])).take()):
        generation += 1
    return json.dumps([*key, generation])


class VerifyClaims:
    """This process's claims on one open workspace, for one verification pass.

    Open it before listing what to verify: the pass starts then, and work other verifiers finish
    after that is theirs. Leaving it gives back every claim not finished (the work stopped).
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.since = time.time()
        self.holder = ClaimHolder(ws.path)
        self.skipped = 0
        #: Replay runs of dead verifiers deleted by this pass.
        self.removed: list[str] = []
        try:
            for stale in stale_claims(ws.store, ws.path):
                self._clean(stale)
        except BaseException:
            self.holder.close()
            raise

    def take(self, attribution: Attribution) -> bool:
        """Claim `attribution` for this process; False when another verifier has it or just did it."""
        taken, stale = take_claim(
            self.ws.store, self.ws.path, claim_key(attribution), self.holder.id, self.since
        )
        if stale is not None:
            self._clean(stale)
        self.skipped += not taken
        return taken

    def finish(self, attribution: Attribution) -> None:
        """Its verdict is saved: the claim is done."""
        finish_claim(self.ws.store, claim_key(attribution), self.holder.id)

    def close(self) -> None:
        try:
            release_claims(self.ws.store, self.holder.id)
        finally:
            self.holder.close()

    def __enter__(self) -> VerifyClaims:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _clean(self, stale: StaleClaim) -> None:
        removed = remove_orphan_replays(self.ws.store, stale)
        self.removed += removed
        if removed:
            run, case_id, method, _ = stale.key
            _log.warning(
                "memtrace: a verifier of case %s of run %s (%s) ended before finishing: its half-recorded"
                " replay run(s) %s were deleted and the claim is verified again",
                case_id,
                run,
                method,
                ", ".join(removed),
            )
