"""Layer 6, the search: the oracle that judges candidates by compiling them (oracle.py), the ddmin and
transform search over a schedule of passes (reduction.py), and the passes (passes/), which only propose
Edits.

May import: reducer.core, reducer.kernels, reducer.compile (the oracle only; passes import no compiler)."""
