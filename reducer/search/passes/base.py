"""What a pass is. A pass only proposes smaller Cases, as Edits; it never runs anything.

- DeletionPass: exposes groups of removable units (statements of one block, attrs, env vars, ops), named
  for a person, and applies "keep this subset"; one generic ddmin in the search serves them all.
- TransformPass: yields single edits in the order it believes most useful (loop -> body, an expression
  to an operand); the search takes the first interesting one and asks again. A lateral TransformPass
  (`enables` set) yields edits of equal size that open the way for another pass.
- NumberPass: exposes the integers of a case that may go lower (a dim, a dim together with the literals
  that restate it), each with the case at any other value; the search finds how low each can go.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from reducer.core.case import Case

DESCRIPTION_CHARS = 100  # an edit's description is cut here: it is read in a log, not replayed from


@dataclass(frozen=True)
class Edit:
    """One proposed change: what it does in words, and the case it makes."""

    description: str
    after: Case
    position: int = 0  # where it stands among its pass's edits of the case before it (set by the search)

    def __post_init__(self) -> None:
        if len(self.description) > DESCRIPTION_CHARS:
            object.__setattr__(self, "description", self.description[: DESCRIPTION_CHARS - 3] + "...")


def code(node_text: str) -> str:
    """A piece of kernel source on one line, for an edit's description."""
    return "`" + " ".join(node_text.split()) + "`"


class DeletionPass(ABC):
    name: str

    @abstractmethod
    def groups(self, case: Case) -> int:
        """How many independent unit lists `case` has now (e.g. statement blocks)."""

    @abstractmethod
    def units(self, case: Case, group: int) -> list[str]:
        """The units of group `group`, each named for a person (an attr's key, a statement's first line)."""

    @abstractmethod
    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        """`case` with only the units `kept` of `group`; None if that is not expressible."""


class TransformPass(ABC):
    name: str
    # A lateral pass names the passes its edits enable: its edits are not smaller, and the search takes
    # one only together with a strictly smaller edit of one of these passes that follows it (lookahead).
    enables: tuple[str, ...] = ()
    # Runs at the head of every round, whatever the last round's counts: its edits exist only once other
    # passes have made extents 1, and the next passes of that round would take away what it needs.
    leads: bool = False

    @abstractmethod
    def edits(self, case: Case) -> Iterator[Edit]:
        """Single edits of `case`, the ones most worth trying first."""


@dataclass(frozen=True)
class Number:
    """One integer of a case: what it is for a person (`dim 0[1]`, which stays when the value changes), its
    value, and the case with it set to another value (None when that is not a well-formed case)."""

    label: str
    value: int
    at: Callable[[int], Case | None]


class NumberPass(ABC):
    name: str

    @abstractmethod
    def numbers(self, case: Case) -> list[Number]:
        """The integers of `case` this pass lowers; the search finds each again by its label."""


Pass = DeletionPass | TransformPass | NumberPass
