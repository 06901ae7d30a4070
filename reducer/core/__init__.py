"""Layer 1, what every layer shares: the values (core/case.py: Case, TensorSpec, Expectation, Mismatch; the
targets, core/targets.py), the errors, the thread-safe Python parser, atomic writes and JSON digests, the
Jinja2 template loader.

May import: reducer.in_mindspore (inside the layer, case.py imports only files.py and targets.py)."""
