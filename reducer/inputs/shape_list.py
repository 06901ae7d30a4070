"""The shapes a kernel is called with, for `reduce shapes`: a shape file (one call per line: the shapes of the
kernel's inputs in order, `[1, 512, 64] [8, 64]`; `#` starts a comment), ranges of dims (`--dims
'x[1]=512..2048/64'`), or the `.info` files a run wrote for the same kernel (one per shape it was built for).
Every line is checked against the kernel's inputs (their number and ranks) before anything compiles; a bad one
is an InputError naming the file, the line and what was expected."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

from reducer.core.case import MAX_DIM, Case
from reducer.core.errors import InputError
from reducer.inputs.info_file import case_from_info, is_kernel_json
from reducer.kernels.kinds import kind_of

Shapes = tuple[tuple[int, ...], ...]
_SHAPE = re.compile(r"\[([^\[\]]*)\]")
_DIMS = re.compile(r"^(?P<dims>[^=]+)=(?P<start>\d+)\.\.(?P<stop>\d+)(?:/(?P<step>\d+))?$")
_DIM = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\[(?P<axis>\d+)\]\s*$")
MAX_LINES = 100_000
MAX_LINE_CHARS = 10_000  # a call of a few inputs of a few dims is tens of characters


@dataclass(frozen=True)
class ShapeLine:
    """One call of the kernel: where it was written, its text as written, the input shapes."""

    where: str  # 'shapes.txt:12', '--dims', 'akg_kernel_meta/Fused_Custom_1.info'
    text: str
    shapes: Shapes


def _shapes_of(text: str, case: Case, where: str) -> Shapes:
    found = _SHAPE.findall(text)
    rest = _SHAPE.sub(" ", text).strip()
    if rest:
        raise InputError(f"{where}: {rest!r} is not a shape; expected one [d, ...] per input, e.g. [1, 512, 64]")
    shapes = []
    for inner in found:
        try:
            dims = tuple(int(d) for d in inner.replace(",", " ").split())
        except ValueError:
            raise InputError(f"{where}: [{inner}] holds a dim that is not an integer") from None
        if any(not 1 <= d <= MAX_DIM for d in dims):
            raise InputError(f"{where}: [{inner}] holds a dim outside 1..{MAX_DIM}")
        shapes.append(dims)
    _check_fits(tuple(shapes), case, where)
    return tuple(shapes)


def _check_fits(shapes: Shapes, case: Case, where: str) -> None:
    names = kind_of(case).input_names(case)
    if len(shapes) != len(case.inputs):
        raise InputError(
            f"{where}: {len(shapes)} shapes; the kernel takes {len(case.inputs)} inputs ({', '.join(names)})"
        )
    for name, shape, spec in zip(names, shapes, case.inputs, strict=True):
        if len(shape) != len(spec.shape):
            raise InputError(f"{where}: {name} has {len(spec.shape)} dims, the line gives {list(shape)}")


def read_shape_file(path: Path, case: Case) -> list[ShapeLine]:
    """The lines of a shape file; InputError naming the first bad line, or a file of more than MAX_LINES calls
    or a line of more than MAX_LINE_CHARS (read line by line, each line bounded: a huge file is refused without
    being held in memory)."""
    lines = []
    try:
        with path.open(encoding="utf-8") as fh:
            for number, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_CHARS + 1), ""), start=1):
                if len(raw) > MAX_LINE_CHARS:
                    raise InputError(f"{path}:{number}: a line of more than {MAX_LINE_CHARS} characters")
                call = raw.split("#", 1)[0].strip()
                if not call:
                    continue
                if len(lines) == MAX_LINES:
                    raise InputError(f"{path}: more than {MAX_LINES} calls")
                lines.append(ShapeLine(f"{path}:{number}", call, _shapes_of(call, case, f"{path}:{number}")))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError(f"{path}: not a UTF-8 text file") from None
    if not lines:
        raise InputError(f"{path}: no shapes; expected one line per call, e.g. [1, 512, 64] [8, 64]")
    return lines


def dim_ranges(specs: list[str], case: Case) -> list[ShapeLine]:
    """The calls of `--dims` ranges, each 'x[1]=512..2048/64' (several dims 'x[1],y[0]=...' move together;
    several options give every combination), the other dims as in the case."""
    names = kind_of(case).input_names(case)
    axes: list[tuple[list[tuple[int, int]], range]] = []
    for spec in specs:
        where = f"option '--dims' {spec!r}"
        match = _DIMS.match(spec.replace(" ", ""))
        if match is None:
            raise InputError(f"{where}: expected DIMS=START..STOP[/STEP], e.g. x[1]=512..2048/64")
        dims = []
        for part in match["dims"].split(","):
            dim = _DIM.match(part)
            if dim is None or dim["name"] not in names:
                raise InputError(f"{where}: {part!r} is not an input's dim; expected NAME[AXIS] of {', '.join(names)}")
            i, axis = names.index(dim["name"]), int(dim["axis"])
            if axis >= len(case.inputs[i].shape):
                raise InputError(f"{where}: {dim['name']} has {len(case.inputs[i].shape)} dims, no axis {axis}")
            dims.append((i, axis))
        start, stop, step = int(match["start"]), int(match["stop"]), int(match["step"] or 1)
        if not 1 <= start <= stop <= MAX_DIM or step < 1:
            raise InputError(f"{where}: expected 1 <= START <= STOP <= {MAX_DIM} and STEP >= 1")
        axes.append((dims, range(start, stop + 1, step)))
    # Counted before any call is made: a product of ranges is refused without being expanded.
    count = math.prod(len(r) for _, r in axes)
    if count > MAX_LINES:
        raise InputError(f"option '--dims': {count} calls; at most {MAX_LINES}")
    lines = []
    for values in itertools.product(*(r for _, r in axes)):
        shapes = [list(t.shape) for t in case.inputs]
        for (dims, _), value in zip(axes, values, strict=True):
            for i, axis in dims:
                shapes[i][axis] = value
        text = " ".join(str(s).replace(" ", "") for s in shapes).replace(",", ", ")
        lines.append(ShapeLine("--dims", text, tuple(tuple(s) for s in shapes)))
    return lines


def _same_kernel(a: Case, b: Case) -> bool:
    kind = kind_of(a)
    if kind is not kind_of(b) or len(a.inputs) != len(b.inputs):
        return False
    if kind.python_function:
        return (a.source, a.function, a.op_attrs) == (b.source, b.function, b.op_attrs)
    return kind.ops(a) == kind.ops(b) and [len(t.shape) for t in a.inputs] == [len(t.shape) for t in b.inputs]


def run_shapes(folder: Path, case: Case) -> list[ShapeLine]:
    """The input shapes of every `.info` under `folder` (a run's akg_kernel_meta/) that holds the same kernel
    as `case` (the same function, or the same ops): the shapes the run called it with."""
    if not folder.is_dir():
        raise InputError(f"option '--from-run': {folder} is not a folder")
    found: dict[Shapes, ShapeLine] = {}
    for path in sorted(folder.rglob("*.info")):
        try:
            text = path.read_text(encoding="utf-8")
            if not is_kernel_json(text):
                continue
            other = case_from_info(path, text)
        except (OSError, ValueError, InputError):
            continue
        if _same_kernel(case, other):
            shapes = tuple(t.shape for t in other.inputs)
            text = " ".join(str(list(s)) for s in shapes)
            found.setdefault(shapes, ShapeLine(str(path), text, shapes))
    if not found:
        raise InputError(f"option '--from-run': no .info under {folder} holds this kernel ({case.name})")
    return list(found.values())
