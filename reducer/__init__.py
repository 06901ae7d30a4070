"""akg-reduce: shrink a MindSpore AKG compiler failure to the smallest case that fails the same way."""

__version__ = "0.1.0"
