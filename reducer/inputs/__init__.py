"""Layer 4, what a user points the reducer at, turned into a valid Case: crash.yaml (crash_yaml.py: schema,
load, and the replayable crash.yaml of a bundle), a `.info` from akg_kernel_meta/ (info_file.py), the
kernel function cut out of a module (source.py), the entry points from a path (load.py), the failing
kernels a MindSpore log reports (failure_log.py) and the `.info` files a run wrote (kernel_meta.py).

May import: reducer.in_mindspore, reducer.core, reducer.toolchain, reducer.kernels."""
