"""Layer 2, where a compile runs: the AKG builds a MindSpore wheel ships and which one compiles a target
(builds.py), the MindSpore releases the tool installs for a target whose build the running one lacks
(releases.py), the nvcc stand-in for a machine without a GPU (nvcc.py, nvcc_shim/), and launch.py, the one
launcher: the interpreter, the AKG build and the environment a case's compile and every program of
reducer/in_mindspore run with.

May import: reducer.in_mindspore, reducer.core."""
