"""Passes over the compile configuration: delete attrs and env entries, then simplify attr values
(numbers toward 0 and 1, strings toward empty, number lists such as `dim` group by group)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from reducer.core.case import Case
from reducer.search.passes.base import DeletionPass, Edit, TransformPass


class DeleteEntries(DeletionPass):
    """ddmin over the entries of one mapping field of the Case: `attrs` or `env`."""

    def __init__(self, field: str) -> None:
        self.name = field
        self.field = field

    def groups(self, case: Case) -> int:
        return 1 if getattr(case, self.field) else 0

    def units(self, case: Case, group: int) -> list[str]:
        return list(getattr(case, self.field))

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case:
        entries = getattr(case, self.field)
        keys = list(entries)
        return case.with_(**{self.field: {keys[i]: entries[keys[i]] for i in kept}})


def _simpler_values(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [v for v in (0, 1) if abs(v) < abs(value)]
    if isinstance(value, float):
        return [v for v in (0.0, 1.0) if abs(v) < abs(value)]
    if isinstance(value, str) and value:
        return ["", *_simpler_number_lists(value)]
    if isinstance(value, list) and value:
        return [value[:1]] if len(value) > 1 else []
    return []


def _simpler_number_lists(value: str) -> list[str]:
    """For number-list attrs such as AKG's manual tiling `dim` ("index axis tile tile" groups of four):
    drop one group, or shrink one number."""
    numbers = value.split()
    if not all(n.isdigit() for n in numbers):
        return []
    out = []
    if len(numbers) % 4 == 0 and len(numbers) > 4:
        out += [" ".join(numbers[:i] + numbers[i + 4 :]) for i in range(0, len(numbers), 4)]
    for i, n in enumerate(numbers):
        for smaller in dict.fromkeys((1, int(n) // 2)):
            if 0 < smaller < int(n):
                out.append(" ".join([*numbers[:i], str(smaller), *numbers[i + 1 :]]))
    return out


class SimplifyAttrValues(TransformPass):
    name = "attr-values"

    def edits(self, case: Case) -> Iterator[Edit]:
        for key, value in case.attrs.items():
            for simpler in _simpler_values(value):
                yield Edit(f"attr {key}: {value!r} -> {simpler!r}", case.with_(attrs={**case.attrs, key: simpler}))
