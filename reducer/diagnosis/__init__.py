"""Layer 7, what the bundle says about the minimal case beyond "it fails": the AKG stage that fails
(stage.py), attrs or dtypes that avoid the failure (workarounds.py), the shape boundary (boundary.py), and
the time-boxed run of both (diagnose.py).

May import: reducer.core, reducer.kernels, reducer.compile, reducer.search (the oracle)."""
