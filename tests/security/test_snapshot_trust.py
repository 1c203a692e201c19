"""The attacker hands over a workspace folder with a signing key of its own and pickles signed by it:
`memtrace verify` must never unpickle them (it used to trust whatever `.snapshot-key` the folder held)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

import memtrace as mt
from conftest import run_cli_in_process
from memtrace.systems.signing import user_key_path
from memtrace.systems.snapshots import SNAPSHOT_DIR

#: The signed-pickle layout (signing.py): a magic line, an HMAC-SHA256 of the pickle, the pickle.
MAGIC = b"memtrace-signed-pickle-1\n"


class RunsCode:
    """A pickle whose loading creates a marker file: proof that a snapshot executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def attributed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Mem0 (offline) over the sample conversation, with snapshots and flow attributions of its failures
    (DeletionErrors and a RetrievalError among them: claims whose verification replays)."""
    from memtrace.attribution.engine import attribute
    from memtrace.datasets import sample_conversation
    from memtrace.systems import run_conversation
    from memtrace.systems.mem0 import Mem0System

    workspace = tmp_path_factory.mktemp("honest") / "ws"
    run_conversation(Mem0System(), sample_conversation(0), workspace)
    with mt.open(workspace) as ws:
        assert attribute(ws, "flow")
    return workspace


def attackers_copy(source: Path, folder: Path, marker: Path, *, keep_json: bool) -> Path:
    """The workspace as an attacker hands it over: every pickle replaced by one that runs code, all
    signed with a key the attacker put in the folder (where older versions looked for the key)."""
    workspace = folder / "from-someone-else"
    shutil.copytree(source, workspace)
    key = os.urandom(32)
    (workspace / ".snapshot-key").write_bytes(key)
    data = pickle.dumps(RunsCode(marker))
    signed = MAGIC + hmac.new(key, data, hashlib.sha256).digest() + data
    (run_dir,) = (workspace / SNAPSHOT_DIR).iterdir()
    index = [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines()]
    for name in ["conversation", *(entry["label"] for entry in index)]:
        (run_dir / f"{name}.pkl").write_bytes(signed)
    if not keep_json:
        (run_dir / "conversation.json").unlink(missing_ok=True)
    return workspace


def test_verify_never_unpickles_snapshots_signed_by_the_folders_own_key(
    attributed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """With the conversation as JSON (data), verify re-runs each replay from the first message and
    says in one line that the folder's snapshots are not signed by the user's key."""
    marker = tmp_path / "code-ran"
    workspace = attackers_copy(attributed, tmp_path, marker, keep_json=True)
    try:
        code, out, err = run_cli_in_process(capsys, "verify", workspace, "--json", tmp_path / "v.json")
    finally:
        assert not marker.exists(), "a snapshot from the folder ran code"
    assert code == 0, out + err
    assert json.loads((tmp_path / "v.json").read_text())["verified_now"] > 0
    (refusal,) = [r.getMessage() for r in caplog.records if "not signed by your key" in r.getMessage()]
    assert str(user_key_path()) in refusal and "replaying from the first message" in refusal
    assert "\n" not in refusal  # one line, said once though every claim of the run replays


def verdicts(workspace: Path) -> dict[tuple[str, str], str | None]:
    with mt.open(workspace) as ws:
        return {(a.run_id, a.case_id): a.verified for a in ws.store.attributions(method="flow")}


def test_re_running_from_the_first_message_reaches_the_verdicts_trusted_snapshots_reach(
    attributed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fallback is the same replay, only slower: construction re-run past untrusted snapshots keeps
    every operation's id, so each repair still lands on the operation it names."""
    honest = tmp_path / "honest"
    shutil.copytree(attributed, honest)
    assert run_cli_in_process(capsys, "verify", honest)[0] == 0
    foreign = attackers_copy(attributed, tmp_path, tmp_path / "code-ran", keep_json=True)
    assert run_cli_in_process(capsys, "verify", foreign)[0] == 0
    expected = verdicts(honest)
    assert verdicts(foreign) == expected
    # Not a comparison of two empty outcomes: several claims were confirmed by a replay that ran.
    assert sum(verdict == "flow-confirmed" for verdict in expected.values()) >= 2


def test_verify_workers_refuse_them_too_and_reach_the_same_verdicts(
    attributed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`verify --workers 2` sends the folder's pickles to its workers as they are (only those the
    user's key signed are signed again, under the task's key): no worker unpickles them either."""
    honest = tmp_path / "honest"
    shutil.copytree(attributed, honest)
    assert run_cli_in_process(capsys, "verify", honest)[0] == 0
    marker = tmp_path / "code-ran"
    foreign = attackers_copy(attributed, tmp_path, marker, keep_json=True)
    try:
        code, out, err = run_cli_in_process(capsys, "verify", foreign, "--workers", "2")
    finally:
        assert not marker.exists(), "a snapshot from the folder ran code in a worker"
    assert code == 0, out + err
    assert verdicts(foreign) == verdicts(honest)


def test_a_task_key_stands_in_for_the_users_key_only_inside_its_block(attributed: Path) -> None:
    """A verify worker signs and trusts its scratch snapshots with a key of its own, never the user's."""
    from memtrace.systems.signing import sign_data, signed_data, task_key, user_key

    mine, theirs = user_key(), os.urandom(32)
    path = attributed.parent / "signed.pkl"
    with task_key(theirs):
        assert user_key() == theirs
        sign_data(pickle.dumps([1, 2]), path, user_key())
    assert user_key() == mine
    assert signed_data(path, mine) is None and signed_data(path, theirs) == pickle.dumps([1, 2])
    with pytest.raises(ValueError, match="32 bytes"), task_key(b"short"):
        pass


def test_verify_says_it_cannot_replay_when_the_conversation_is_only_a_foreign_pickle(
    attributed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a conversation it can read as data there is nothing to re-run: one line, no code run."""
    marker = tmp_path / "code-ran"
    workspace = attackers_copy(attributed, tmp_path, marker, keep_json=False)
    try:
        code, out, err = run_cli_in_process(capsys, "verify", workspace)
    finally:
        assert not marker.exists(), "a snapshot from the folder ran code"
    assert code != 0
    (line,) = [text for text in (out + err).splitlines() if "not signed by your key" in text]
    assert "conversation.pkl" in line and "MEMTRACE_SNAPSHOT_KEY_FILE" in line


def test_the_key_is_the_users_own_file_outside_the_workspace(attributed: Path) -> None:
    """Recording made the user's key (mode 0600) and left no key in the workspace folder."""
    assert user_key_path().stat().st_mode & 0o777 == 0o600
    assert attributed not in user_key_path().parents
    assert not (attributed / ".snapshot-key").exists()


def test_a_key_others_can_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key readable by others would let them sign snapshots that run code in the user's replays."""
    from memtrace.errors import MemtraceError
    from memtrace.systems.signing import KEY_ENV, user_key

    key = tmp_path / "snapshot-key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    monkeypatch.setenv(KEY_ENV, str(key))
    with pytest.raises(MemtraceError, match="readable by you alone"):
        user_key()


@pytest.mark.parametrize(
    "text",
    ['{"format": "memtrace-conversation-1", "id": 5}', "[1, 2]", '{"format": "pickle"}', "not json"],
)
def test_a_conversation_file_of_the_wrong_shape_is_one_line_naming_it(text: str) -> None:
    """The conversation is data from the folder too: a wrong one is refused by name, not a traceback."""
    from memtrace.errors import NotReplayableError
    from memtrace.systems.conversation_json import conversation_from_json

    with pytest.raises(NotReplayableError, match=r"^conv\.json: not a conversation memtrace wrote") as info:
        conversation_from_json(text, "conv.json")
    assert "\n" not in str(info.value)


def test_a_conversation_round_trips_through_json() -> None:
    """What the snapshot writer stores is the conversation itself, or it keeps a signed pickle."""
    from memtrace.datasets import sample_conversation
    from memtrace.systems.conversation_json import conversation_from_json, conversation_to_json

    conversation = sample_conversation(3)
    text = conversation_to_json(conversation)
    assert text is not None and conversation_from_json(text, "-") == conversation
    conversation.metadata["opened"] = {1, 2}  # a set: JSON cannot hold it
    assert conversation_to_json(conversation) is None
