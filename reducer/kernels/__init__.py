"""Layer 1, the two kernel kinds: Hybrid DSL functions (hybrid_check.py: MindSpore's static checks;
hybrid.py: its intrinsics and output inference by running the function as Python), fused graphs (graph.py:
structure, shape inference, edits), the `.info` writer for a Hybrid DSL case (info.py), the size order
(size.py) and the kinds as objects (kinds.py: `kind_of(case)` is the one place that tells them apart).

May import: reducer.core."""
