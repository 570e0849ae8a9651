"""A cache of what a leaf function prepares once per lookahead (a re-solve calls the leaf
function every iteration, with the same lookahead).

Keyed by identity, checked with a weak reference: CPython gives a new lookahead the address
of a freed one (``id()`` is reused), and a cache keyed by ``id()`` alone then serves the old
tree's leaves to the new one (wrong values, or an index past the new tree's leaves).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from agent.solver.lookahead import Lookahead

T = TypeVar("T")


class PerLookahead(Generic[T]):
    """Values prepared once per lookahead; a few are kept."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._items: dict[int, tuple[weakref.ref[Lookahead], T]] = {}

    def peek(self, la: Lookahead) -> T | None:
        """The value prepared for ``la``, or None."""
        item = self._items.get(id(la))
        return item[1] if item is not None and item[0]() is la else None

    def get(self, la: Lookahead, build: Callable[[], T]) -> T:
        """The value prepared for ``la``, calling ``build()`` on its first use; past ``size`` lookaheads
        the whole cache is dropped."""
        item = self._items.get(id(la))
        if item is not None and item[0]() is la:
            return item[1]
        if len(self._items) >= self.size:
            self._items.clear()
        value = build()
        self._items[id(la)] = (weakref.ref(la), value)
        return value
