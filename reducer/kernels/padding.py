"""What padding an input dim does to a kernel's results: a dispatch plan runs a failing shape as a bigger
one that compiles, zero-padded at the end of some dims, and cuts each output back to its unpadded shape. That is
right only when the zeros leave every kept result as it was. Told by running the kernel's reference (a Hybrid
DSL kernel as Python, a TeLang kernel by plain TVM) on inputs drawn around zero, each padded dim more than
doubled: once with zeros in the padding (what the plan does), once with near copies of the inputs' own values
(any reduction over the padding, or mix with it, then shows). A dim is padded freely only when neither
changes a result; one the kernel reduces over or mixes needs a mask: zeros happen to be right for a sum, but
no draw proves them right for a min over distances, so a plan never relies on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reducer.core.case import TensorSpec

Dim = tuple[int, int]  # (input index, axis)
ZEROS, COPIES = "zeros", "near copies of the inputs' values"


@dataclass(frozen=True)
class PaddingEffect:
    """'' or why: the results change with zeros in the padding (`zeros`), with near copies of the inputs'
    values (`copies`); `untold` when the reference could not be run."""

    zeros: str
    copies: str
    untold: str = ""

    @classmethod
    def untold_because(cls, why: str) -> PaddingEffect:
        return cls("", "", f"cannot be told: {why}")

    @property
    def safe(self) -> bool:
        """Padding, cut back, gives the unpadded results whatever the padding holds."""
        return not (self.untold or self.zeros or self.copies)

    def words(self) -> str:
        if self.untold:
            return f"a mask may be needed: {self.untold}"
        if self.zeros or self.copies:
            return f"needs a mask (the kernel reduces over or mixes it): {self.zeros or self.copies}"
        return "padded freely: no result within the unpadded outputs changes (checked)"


def padded_shapes(inputs: tuple[TensorSpec, ...], dims: list[Dim]) -> list[tuple[int, ...]]:
    """The inputs' shapes with each of `dims` more than doubled."""
    shapes = [list(t.shape) for t in inputs]
    for i, axis in dims:
        shapes[i][axis] = 2 * shapes[i][axis] + 1
    return [tuple(s) for s in shapes]


def drawn(rng: np.random.Generator, spec: TensorSpec) -> np.ndarray:
    """Values around zero: a zero in the padding then changes a min, a max or a mean it joins."""
    if spec.dtype == "bool":
        return rng.integers(0, 2, spec.shape).astype(bool)
    if spec.dtype.startswith("uint"):
        return rng.integers(0, 8, spec.shape).astype(spec.dtype)
    if spec.dtype.startswith("int"):
        return rng.integers(-4, 5, spec.shape).astype(spec.dtype)
    return rng.uniform(-1.0, 1.0, spec.shape).astype(spec.dtype)


def widened(rng: np.random.Generator, value: np.ndarray, shape: tuple[int, ...], fill: str) -> np.ndarray:
    """`value` padded at the end to `shape` with zeros, or with its own elements repeated and nudged."""
    out = np.zeros(shape, value.dtype)
    if fill == COPIES:
        out = np.array(value[np.ix_(*(np.arange(n) % d for n, d in zip(shape, value.shape, strict=True)))])
        if out.dtype.kind == "f":
            out = (out * rng.uniform(0.99, 1.01, shape)).astype(value.dtype)
        elif out.dtype.kind in "iu":
            out = (out + rng.integers(0, 2, shape)).astype(value.dtype)
    out[tuple(slice(0, n) for n in value.shape)] = value
    return out


def change(want: list[np.ndarray], got: list[np.ndarray], fill: str) -> str:
    """How the padded run's outputs, cut back, differ from the unpadded run's ('' when they do not)."""
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if g.ndim != w.ndim or any(gd < wd for gd, wd in zip(g.shape, w.shape, strict=True)):
            return f"output {i} does not grow with the padding ({list(w.shape)} becomes {list(g.shape)})"
        if not np.array_equal(g[tuple(slice(0, n) for n in w.shape)], w, equal_nan=True):
            return f"output {i} changes within its unpadded shape when the padding holds {fill}"
    return ""


def effect_of(
    run: Callable[[list[np.ndarray]], list[np.ndarray]], inputs: tuple[TensorSpec, ...], dims: list[Dim]
) -> PaddingEffect:
    """The effect of padding `dims`, with `run` the kernel's reference on a list of input values."""
    rng = np.random.default_rng(0)
    values = [drawn(rng, t) for t in inputs]
    want = run(values)
    shapes = padded_shapes(inputs, dims)
    found = {
        fill: change(want, run([widened(rng, v, s, fill) for v, s in zip(values, shapes, strict=True)]), fill)
        for fill in (ZEROS, COPIES)
    }
    return PaddingEffect(found[ZEROS], found[COPIES])
