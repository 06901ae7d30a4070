"""Layer 3, the kernel kinds: Hybrid DSL functions (hybrid_check.py: MindSpore's static checks;
hybrid.py: its intrinsics and output inference by running the function as Python), TeLang and ir_builder
functions (telang.py: evaluated by AKG's tvm in a probe), fused graphs (graph.py: structure, shape inference,
edits), the `.info` writer of a Custom op (info.py), the size order (size.py) and the kinds as objects
(kinds.py: `kind_of(case)` and `kind_of_info(info)` are the one place that tells them apart, and everything
that differs between them, the crash.yaml fields included, is a method or attribute of the kind).

May import: reducer.in_mindspore, reducer.core, reducer.toolchain (the TeLang probe's launch)."""
