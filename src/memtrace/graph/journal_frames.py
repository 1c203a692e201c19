"""Reading a journal's frames (journal.py writes them): each a length, then a marshalled tuple.

Kept apart from ingesting so each stays one concern: this module says what a frame is and when a
file's bytes are damage; journal.py decides what to do with the frames and the damage.
"""

from __future__ import annotations

import marshal
import os
import struct
from collections.abc import Iterator
from pathlib import Path

from .journal_shape import shape_problem

HEADER = struct.Struct("<Q")

#: A frame longer than this is a damaged length field, not data: one frame is one flushed batch.
MAX_FRAME_BYTES = 1 << 32


def read_frames(path: Path, offset: int, run_id: str, *, final: bool) -> Iterator[tuple[tuple, int, int]]:
    """Complete frames from `offset` on, each with the offsets where it starts and just after it.

    Stops at a frame still being written, unless the file is `final` (its writer has ended): then a
    frame cut short, or a length field pointing past the end, is damage. Raises `DamagedJournal`
    when a complete frame cannot be decoded, has the wrong shape, or a length field is impossible.
    """
    with open(path, "rb") as handle:
        handle.seek(offset)
        while True:
            header = handle.read(HEADER.size)
            if not header or (len(header) < HEADER.size and not final):
                return
            if len(header) < HEADER.size:
                raise DamagedJournal(offset, f"the file ends inside a frame header ({len(header)} bytes)")
            (size,) = HEADER.unpack(header)
            if size > MAX_FRAME_BYTES:
                raise DamagedJournal(offset, f"frame length {size} is impossible")
            remaining = os.fstat(handle.fileno()).st_size - handle.tell()
            payload = handle.read(size) if size <= remaining else b""
            if len(payload) < size:
                if final:
                    raise DamagedJournal(
                        offset,
                        f"frame length {size} points past the end of the file ({remaining} bytes left)",
                    )
                return
            try:
                frame = marshal.loads(payload)
            except (ValueError, EOFError, TypeError) as exc:
                raise DamagedJournal(offset, str(exc)) from None
            problem = shape_problem(frame, run_id)
            if problem is not None:
                raise DamagedJournal(offset, problem)
            start, offset = offset, offset + HEADER.size + size
            yield frame, start, offset


class DamagedJournal(Exception):
    """A journal frame that is complete but unreadable: what follows it is lost."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"journal damaged at byte {offset} ({reason}); later records lost")
        self.offset = offset
