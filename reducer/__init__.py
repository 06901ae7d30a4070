"""akg-reduce: shrink a MindSpore AKG compiler failure to the smallest case that fails the same way.

One package per layer, each importing only the layers below it (tests/test_layers.py checks it):
core < kernels < inputs < compile < search < diagnosis < bundle < session.py < nightly < cli.py.
docs/architecture.md draws the picture."""

__version__ = "0.1.0"
