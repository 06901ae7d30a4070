"""What a bundle's repro.py says about getting the AKG build it compiles with: the MindSpore release that
compiled the bundle, not the one the tool would install."""

from __future__ import annotations

from reducer.bundle.write import _getting_build
from reducer.core.targets import AICORE, CPU


def test_the_repro_names_the_mindspore_that_compiled_the_bundle() -> None:
    assert "`pip install mindspore==2.7.0 decorator`" in _getting_build(AICORE, "2.7.0")
    assert "`pip install mindspore==2.7.2 decorator`" in _getting_build(AICORE, "2.7.2")
    assert "`pip install mindspore==2.7.2 decorator`" in _getting_build(AICORE, "unknown")  # what it installs
    assert _getting_build(CPU, "2.10.0") == ""  # every wheel ships the CPU build
