"""A total order for imported graphs whose only clock is a millisecond time stamp.

smartcomment orders records by `created_at` strings that collide in fast runs, so an importer
cannot trust them alone. `priority_order` is Kahn's topological sort with a heap: among the
records whose dependencies are met it always takes the one with the smallest priority (time,
then file position). A cycle never aborts the import: the earliest blocked record is released.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any


def priority_order(priority: Sequence[Any], before: Iterable[tuple[int, int]]) -> list[int]:
    """Indices 0..n-1 in an order that keeps every (a, b) of `before` as a-before-b where it can.

    `priority[i]` is any comparable key; ties between ready records go to the smaller key.
    """
    n = len(priority)
    successors: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for a, b in set(before):
        if a != b:
            successors[a].append(b)
            indegree[b] += 1
    heap = [(priority[i], i) for i in range(n) if indegree[i] == 0]
    heapq.heapify(heap)
    by_priority: list[int] | None = None  # built only when a cycle has to be broken
    cursor = 0
    done = [False] * n
    order: list[int] = []
    while len(order) < n:
        if not heap:
            if by_priority is None:
                by_priority = sorted(range(n), key=lambda i: (priority[i], i))
            while done[by_priority[cursor]]:
                cursor += 1
            forced = by_priority[cursor]
            indegree[forced] = 0
            heapq.heappush(heap, (priority[forced], forced))
        _, i = heapq.heappop(heap)
        if done[i]:
            continue
        done[i] = True
        order.append(i)
        for j in successors[i]:
            indegree[j] -= 1
            if indegree[j] == 0 and not done[j]:
                heapq.heappush(heap, (priority[j], j))
    return order
