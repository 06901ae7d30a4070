"""A shape list as a user writes it: one call per line, comments, ranges of dims and the `.info` files of a run;
every bad line is refused with its file and line, before anything compiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS

from reducer.core.errors import InputError
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.shape_list import dim_ranges, read_shape_file, run_shapes
from reducer.kernels.kinds import kind_of, outputs_of, with_shapes

pytestmark = pytest.mark.timeout(60)
NEAREST = CORPUS / "nearest_distance_odd_points" / "crash.yaml"


@pytest.fixture
def case():
    return load_case(NEAREST)


def test_lines_comments_and_blank_lines(tmp_path: Path, case) -> None:
    listed = tmp_path / "shapes.txt"
    listed.write_text("# query, ref\n[2, 27, 3] [2, 64, 3]\n\n[2,28,3][2,64,3]   # even\n  [1 5 3] [1, 9, 3]\n")
    lines = read_shape_file(listed, case)
    assert [line.shapes for line in lines] == [
        ((2, 27, 3), (2, 64, 3)),
        ((2, 28, 3), (2, 64, 3)),
        ((1, 5, 3), (1, 9, 3)),
    ]
    assert [line.where for line in lines] == [f"{listed}:2", f"{listed}:4", f"{listed}:5"]
    assert lines[1].text == "[2,28,3][2,64,3]"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[2, 27, 3]\n", "1 shapes; the kernel takes 2 inputs (query, ref)"),
        ("[2, 27] [2, 64, 3]\n", "query has 3 dims, the line gives [2, 27]"),
        ("[2, 0, 3] [2, 64, 3]\n", "[2, 0, 3] holds a dim outside 1..2147483647"),
        ("[2, x, 3] [2, 64, 3]\n", "[2, x, 3] holds a dim that is not an integer"),
        ("(2, 27, 3) [2, 64, 3]\n", "'(2, 27, 3)' is not a shape"),
        ("# nothing\n\n", "no shapes; expected one line per call"),
        ("[2, 27, 3] " * 10_000, "a line of more than 10000 characters"),  # no newline: read in bounded pieces
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, case, text: str, said: str) -> None:
    listed = tmp_path / "shapes.txt"
    listed.write_text("[2, 28, 3] [2, 64, 3]\n" + text if "nothing" not in text else text)
    with pytest.raises(InputError) as error:
        read_shape_file(listed, case)
    where = f"{listed}:2" if "nothing" not in text else str(listed)
    assert str(error.value).startswith(where) and said in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_file_is_named(tmp_path: Path, case) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_shape_file(tmp_path / "none.txt", case)


def test_dim_ranges_give_every_combination(case) -> None:
    lines = dim_ranges(["query[1]=16..32/8", "ref[1], query[0] = 1..2"], case)
    assert [line.shapes for line in lines] == [((v, n, 3), (2, v, 3)) for n in (16, 24, 32) for v in (1, 2)]
    assert lines[0].text == "[1, 16, 3] [2, 1, 3]"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("query[1]=16-32", "expected DIMS=START..STOP[/STEP]"),
        ("points[1]=1..4", "'points[1]' is not an input's dim; expected NAME[AXIS] of query, ref"),
        ("query[3]=1..4", "query has 3 dims, no axis 3"),
        ("query[1]=8..4", "expected 1 <= START <= STOP"),
    ],
)
def test_bad_dim_ranges(case, spec: str, said: str) -> None:
    with pytest.raises(InputError, match="option '--dims'") as error:
        dim_ranges([spec], case)
    assert said in str(error.value)


def test_the_shapes_a_run_built_the_kernel_for(tmp_path: Path, case) -> None:
    meta = tmp_path / "rank_0" / "akg_kernel_meta"
    meta.mkdir(parents=True)
    for n, shapes in enumerate([((2, 27, 3), (2, 64, 3)), ((2, 28, 3), (2, 64, 3)), ((2, 27, 3), (2, 64, 3))]):
        call = with_shapes(case, list(shapes))
        (meta / f"Fused_Custom_{n}.info").write_text(json.dumps(kind_of(call).info(call, outputs_of(call))))
    other = load_case(CORPUS / "knn_loop_from_one_vectorize" / "crash.yaml")
    (meta / "Fused_Custom_other.info").write_text(json.dumps(kind_of(other).info(other, outputs_of(other))))
    lines = run_shapes(tmp_path, case)
    assert [line.shapes for line in lines] == [((2, 27, 3), (2, 64, 3)), ((2, 28, 3), (2, 64, 3))]
    assert lines[0].where.endswith("Fused_Custom_0.info")
    with pytest.raises(InputError, match=r"no \.info under"):
        run_shapes(tmp_path / "rank_0" / "akg_kernel_meta" / "..", other.with_(source="def f(x):\n    return x\n"))
    with pytest.raises(InputError, match="is not a folder"):
        run_shapes(tmp_path / "none", case)
