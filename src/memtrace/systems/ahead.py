"""The question stage's model calls, fetched ahead and many at a time (llm/ahead.py).

After construction the memory no longer changes, and a question's answer and judge calls depend on
nothing but it: each of `threads` threads answers its share of the questions on its own copy of the
system's state (the pickled state a snapshot holds), with recording muted, keeping the model's
replies. The recorded pass then answers in order as ever and finds its replies waiting, so one
run's questions wait on the model `threads` at a time instead of one by one, and the graph is the
one a run without fetching ahead records. A copy whose work goes astray costs only unused replies.
A system whose state cannot be copied but whose answers only read it (`answers_in_place`) is
answered on by the threads itself.
"""

from __future__ import annotations

import functools
import logging
import pickle
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from .. import trace
from ..datasets import Question
from ..eval import Judge
from ..llm.ahead import Replies, fetching_into
from ..trace.noop import NoopRecorder
from .base import MemorySystem
from .snapshots import TRANSIENT

_log = logging.getLogger("memtrace")


def answers_ahead(
    system: MemorySystem, questions: Sequence[Question], judge: Judge, threads: int
) -> Replies | None:
    """The replies `questions` will need, fetched `threads` at a time; None when nothing is gained
    (offline, one thread, one question, or a system whose state cannot be copied)."""
    if system.llm is None or threads < 2 or len(questions) < 2 or not system.fetches_ahead:
        return None
    if system.answers_in_place:
        answerer = system
    else:
        try:
            state = pickle.dumps({k: v for k, v in system.__dict__.items() if k not in TRANSIENT})
        except Exception as exc:  # a live handle in the state: no copies, the questions go one by one
            _log.debug("memtrace: %s answers without fetching ahead: %s", system.name, exc)
            return None
        answerer = functools.partial(_copy_of, system, state)
    replies, stop = Replies(), threading.Event()
    shares = [list(questions[start::threads]) for start in range(min(threads, len(questions)))]
    pool = ThreadPoolExecutor(len(shares), thread_name_prefix="memtrace-ahead")
    try:
        list(pool.map(lambda share: _answer_share(answerer, share, judge, replies, stop), shares))
    finally:  # Ctrl-C: each thread stops after the call it is making
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
    return replies


def _copy_of(system: MemorySystem, state: bytes) -> MemorySystem:
    """A copy of `system` from its pickled `state` that records nothing."""
    copy = object.__new__(type(system))
    copy.__dict__.update(pickle.loads(state))
    copy.run, copy.llm, copy.conversation = NoopRecorder(), system.llm, system.conversation  # type: ignore[assignment]
    return copy


def _answer_share(
    answerer: MemorySystem | Callable[[], MemorySystem],
    questions: list[Question],
    judge: Judge,
    replies: Replies,
    stop: threading.Event,
) -> None:
    """Answer and judge `questions` on a copy of the system (or on the system itself, when its answers
    only read it), recording nothing, keeping the replies."""
    system = answerer if isinstance(answerer, MemorySystem) else answerer()
    asks = getattr(judge, "client", None) is not None
    with trace.muted(), fetching_into(replies):
        for question in questions:
            if stop.is_set():
                return
            try:
                answer = system.answer(question)
                if asks:
                    category = (
                        question.category_raw if question.category_raw is not None else question.category
                    )
                    judge.verdict(question.question, question.answers, answer.text, category)
            except Exception as exc:  # the recorded pass meets it again, and records it
                _log.debug("memtrace: fetching ahead for %s stopped: %s", question.id, exc)
