"""Layer 2, what a user points the reducer at, turned into a valid Case: crash.yaml (crash_yaml.py: schema,
load, and the replayable crash.yaml of a bundle), a `.info` from akg_kernel_meta/ (info_file.py), the
kernel function cut out of a module (source.py), and the entry points from a path (load.py).

May import: reducer.core, reducer.kernels."""
