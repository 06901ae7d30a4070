"""Layer 10, from a user's failing MindSpore run to bundles: the failing kernels gathered from what the run
printed and wrote and written as replayable crash.yaml files (found.py), checked alone, merged per bug and
reduced (pipeline.py), from a command run under the sandbox's limits or from a saved log (sources.py).

May import: reducer.core, reducer.kernels, reducer.inputs, reducer.compile, reducer.search,
reducer.diagnosis, reducer.bundle, reducer.session."""
