"""Layer 5, running the compiler: the AKG driver (akg.py: a Case's compile or wrong-result check, the
effective attrs of a graph, the cache key, the facts a bundle is handed), the sandbox every compile runs in
(sandbox.py), warm workers (warm.py), the persistent compile cache (cache.py), what "the same bug" is
(identity.py) and reading a compile's output into it (signature.py, crash_stack.py, hang_stack.py), and the
user's own command run under the sandbox's limits for `reduce capture` (user_run.py). The programs these
start live in reducer/in_mindspore and are started through reducer/toolchain/launch.py.

May import: reducer.in_mindspore, reducer.core, reducer.toolchain, reducer.kernels, reducer.inputs."""
