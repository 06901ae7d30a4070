"""Which AKG build compiles a target, on a made-up MindSpore folder: the GPU build of the machine's CUDA,
else the newest; a build asked for by name; and clear errors for what the wheel does not ship."""

from __future__ import annotations

from pathlib import Path

import pytest

from reducer.core.errors import InputError
from reducer.core.targets import CPU, CUDA, TARGETS
from reducer.toolchain import builds
from reducer.toolchain.builds import choose_build


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    for name in ("cpu", "gpu11.1", "gpu11.6"):
        (tmp_path / "lib" / "plugin" / name).mkdir(parents=True)
        (tmp_path / "lib" / "plugin" / name / "libakg.so").write_bytes(name.encode())
    (tmp_path / "lib" / "plugin" / "ascend").mkdir()  # the folder, without an AKG build in it
    return tmp_path


@pytest.mark.parametrize(
    ("cuda", "expected"), [(None, "gpu11.6"), ("11.4", "gpu11.1"), ("11.8", "gpu11.6"), ("13.0", "gpu11.6")]
)
def test_the_gpu_build_follows_the_machines_cuda(
    wheel: Path, monkeypatch: pytest.MonkeyPatch, cuda: str | None, expected: str
) -> None:
    monkeypatch.setattr(builds, "machine_cuda", lambda: cuda)
    build = choose_build(str(wheel), "2.10.0", CUDA, None)
    assert build.name == expected and build.plugin_dir == str(wheel / "lib" / "plugin" / expected)
    assert build.size == len(expected) and len(build.sha256) == 64


def test_cpu_and_a_build_by_name(wheel: Path) -> None:
    assert choose_build(str(wheel), "2.10.0", CPU, None).name == "cpu"
    assert choose_build(str(wheel), "2.10.0", CUDA, "gpu11.1").name == "gpu11.1"


@pytest.mark.parametrize(
    ("target", "requested", "expected"),
    [
        ("aicore", None, "aicore needs AKG's ascend build"),
        ("cuda", "gpu12.0", "no AKG build 'gpu12.0'"),
        ("cuda", "cpu", "cpu does not compile target cuda"),
    ],
)
def test_what_the_wheel_lacks_is_named(wheel: Path, target: str, requested: str | None, expected: str) -> None:
    with pytest.raises(InputError, match=expected) as caught:
        choose_build(str(wheel), "2.10.0", TARGETS[target], requested)
    if target == "aicore":
        assert "ships only cpu, gpu11.1, gpu11.6" in str(caught.value) and "python:" in str(caught.value)
