"""The attrs AKG really compiles a fused graph with, printed as one JSON line; a separate program run under
the toolchain's interpreter in the sandbox (stdlib and wire.py beside it).

AKG merges the attrs it is given with a tiling repository (`MS_GRAPH_KERNEL_TILING`, the `repository_path`
attr, else its own `repository_<process>.json`), keyed by the graph's op pattern, shapes and dtypes, and adds
attrs of its own from the ops (e.g. matmul pragmas on CPU). A smaller graph may hit another repository entry.
This runs AKG's composite build up to the point where it hands the per-segment attrs to the C++ lowering and
stops there: nothing is compiled.
Usage: `python effective_attrs.py <compiler.py> k.info '<attrs json>' <AKG's target name>`.
Prints {"segments": [attrs, ...]}.
"""

import contextlib
import json
import sys

from wire import preload_compiler


class _Stop(Exception):
    pass


def main(script: str, info_path: str, attrs_json: str, akg_target: str) -> None:
    preload_compiler(script)  # AKG imported as compiler.py imports it
    from akg.composite import build_module

    seen = {}

    def capture(attrs, process, poly, segment_tree, segment_infos):
        seen["segments"] = [segment["attrs"] for part in segment_infos.values() for segment in part]
        raise _Stop

    build_module._cpp_build = capture
    with open(info_path) as fh:
        info = json.load(fh)
    attrs = json.loads(attrs_json)
    attrs["target"] = akg_target
    with contextlib.suppress(_Stop):  # raised by capture(): the lowering is not run
        build_module.build(info, attrs)
    print(json.dumps({"segments": seen.get("segments", [])}, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:5])
