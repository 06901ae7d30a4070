"""Layer 0, what every layer shares: the values (core/case.py: Case, TensorSpec, Expectation, Mismatch), the
errors, the thread-safe Python parser, atomic writes and JSON digests, the Jinja2 template loader.

May import: nothing of ours (inside the layer, case.py imports only files.py)."""
