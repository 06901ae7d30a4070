"""The two shapes a pass takes. A pass only proposes smaller Cases; it never runs anything.

- DeletionPass: exposes groups of removable units (statements of one block, attrs, env vars) and applies
  "keep this subset"; one generic ddmin in the search serves them all.
- TransformPass: yields single edits in the order it believes most useful (loop -> body, a dimension to
  a smaller value, an expression to an operand); the search takes the first interesting one and asks again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from reducer.core.case import Case


class DeletionPass(Protocol):
    name: str

    def groups(self, case: Case) -> int:
        """How many independent unit lists `case` has now (e.g. statement blocks)."""
        ...

    def units(self, case: Case, group: int) -> int:
        """How many units group `group` has."""
        ...

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        """`case` with only the units `kept` of `group`; None if that is not expressible."""
        ...


class TransformPass(Protocol):
    name: str

    def candidates(self, case: Case) -> Iterator[Case]: ...


Pass = DeletionPass | TransformPass
