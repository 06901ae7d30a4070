"""Layer 3, running the compiler: the AKG toolchain and driver (akg.py), the sandbox every compile runs in
(sandbox.py), warm workers (warm.py) and the script they run (akg_worker.py), the persistent compile cache
(cache.py), the failure signature of a compile (signature.py), the effective-attrs probe and the
wrong-result runner (effective_attrs.py, mismatch_run.py: scripts run in the compiler's Python, importing
nothing of ours), the user's own command run under the sandbox's limits for `reduce capture`
(user_run.py), and which AKG build of the wheel compiles a target (builds.py).

May import: reducer.core, reducer.kernels."""
