"""Standalone reproducer for an AKG compile failure (conv3d_gemm_tiling).

Needs only MindSpore (2.10.0) and the `decorator` package. Exits 1 and prints the failure while the
bug is present, 0 once the kernel compiles, 2 if it fails some other way.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

KERNEL_INFO = {'composite': True,
 'composite_graph': 'seg_trans__anonymous__1',
 'id': 0,
 'input_desc': [[{'data_type': 'float32',
                  'format': 'DefaultFormat',
                  'shape': [1, 3, 3, 3],
                  'tensor_name': 'input_0'}],
                [{'data_type': 'float32',
                  'format': 'DefaultFormat',
                  'shape': [1],
                  'tensor_name': 'input_1'}]],
 'op': 'Fused_Custom_597899310406125182',
 'op_desc': [{'attr': [{'data_type': 'str', 'name': 'imply_path', 'value': ''},
                       {'data_type': 'bool', 'name': 'multi_output', 'value': False},
                       {'data_type': 'str', 'name': 'func_type', 'value': 'hybrid'},
                       {'data_type': 'str',
                        'name': 'func_source_str',
                        'value': 'def conv3d(x, w):\n'
                                 '    y = output_tensor((1, 3, 3, 3), x.dtype)\n'
                                 '    for b in range(1):\n'
                                 '        for z in range(3):\n'
                                 '            for i in range(3):\n'
                                 '                for j in range(3):\n'
                                 '                    y[b, z, i, j] = 0.0\n'
                                 '                    for ic in range(1):\n'
                                 '                        y[b, z, i, j] += x[ic, z, i, j] * w[ic]\n'
                                 '    return y\n'},
                       {'data_type': 'bool', 'name': 'output_is_dynamic_shape', 'value': False},
                       {'data_type': 'str', 'name': 'func_compile_attrs', 'value': '{}'},
                       {'data_type': 'str',
                        'name': 'uniq_name',
                        'value': 'Custom_conv3d_af22bf345fc0b16bbb866ec8a08ed8b126234fadb87828362c9b7a417b56da4c'},
                       {'data_type': 'str', 'name': 'func_name', 'value': 'conv3d'},
                       {'data_type': 'int', 'name': 'inputs_num', 'value': 2},
                       {'data_type': 'bool', 'name': 'autodiff', 'value': False}],
              'impl_path': '',
              'input_desc': [[{'data_type': 'float32',
                               'format': 'DefaultFormat',
                               'name': 'input_0',
                               'shape': [1, 3, 3, 3],
                               'tensor_name': 'input_0'}],
                             [{'data_type': 'float32',
                               'format': 'DefaultFormat',
                               'name': 'input_1',
                               'shape': [1],
                               'tensor_name': 'input_1'}]],
              'name': 'Custom',
              'output_desc': [{'data_type': 'float32',
                               'format': 'DefaultFormat',
                               'name': 'output_0',
                               'shape': [1, 3, 3, 3],
                               'tensor_name': 'output_0_0'}]}],
 'output_desc': [{'data_type': 'float32',
                  'format': 'DefaultFormat',
                  'shape': [1, 3, 3, 3],
                  'tensor_name': 'output_0_0'}],
 'platform': 'AKG',
 'process': 'cpu',
 'target_info': {'arch': 'x86_64', 'cpu': 'core-avx2', 'feature': 'avx', 'system': 'linux'},
 'version': 2}
ATTRS = {}
ENV = {}
FILES = {}  # written next to the kernel (an empty tiling repository keeps AKG to ATTRS)
EXPECTED_KIND = "error"
EXPECTED_MESSAGE = re.compile("Check\\s+failed:\\s+gemm_m\\.size\\(\\)\\s+\u003c=\\s+FormatM\\.size\\(\\)\\s+\\(-?\\d+(?:\\.\\d+)?\\s+vs\\.\\s+-?\\d+(?:\\.\\d+)?\\)")
EXPECTED_WHERE = "tiling_utils.cc"
TIMEOUT = 60
# Where a compile that got through AKG's passes stops on a machine without the target's code generator.
CODEGEN_STOP = re.compile("") if "" else None


def mindspore_dir():
    import importlib.util

    spec = importlib.util.find_spec("mindspore")
    if spec is None:
        sys.exit("MindSpore is not installed for " + sys.executable)
    return list(spec.submodule_search_locations)[0]


def main():
    ms = mindspore_dir()
    plugin = os.path.join(ms, "lib", "plugin", "cpu")  # the AKG build the reduction used
    if not os.path.isfile(os.path.join(plugin, "libakg.so")):
        sys.exit("This MindSpore has no AKG build 'cpu' (" + plugin + ")")
    env = dict(os.environ, TVM_LIBRARY_PATH=plugin, **ENV)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (plugin, os.environ.get("LD_LIBRARY_PATH")) if p)
    compiler = os.path.join(ms, "_extends", "parallel_compile", "akg_compiler", "compiler.py")
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "kernel.info"), "w") as fh:
            json.dump(KERNEL_INFO, fh)
        for name, text in FILES.items():
            with open(os.path.join(work, name), "w") as fh:
                fh.write(text)
        command = [sys.executable, compiler, "kernel.info", "AKG", json.dumps(ATTRS), "."]
        try:
            run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            print("compile did not finish within %s s" % TIMEOUT)
            return 1 if EXPECTED_KIND == "timeout" else 2
    output = run.stdout + run.stderr
    if run.returncode == 0:  # MindSpore's entry raises on a failed compile: what AKG logged on the way is not one
        print("The kernel compiles: the bug is fixed.")
        return 0
    if CODEGEN_STOP is not None and CODEGEN_STOP.search(output):
        print("The kernel gets through AKG's passes to code generation, which needs CANN here: the bug is fixed.")
        return 0
    if EXPECTED_KIND == "signal":
        same = run.returncode < 0
    else:
        same = bool(EXPECTED_MESSAGE.search(output)) and EXPECTED_WHERE in output
    for line in output.splitlines():
        if "[ERROR]" in line or "Check failed" in line or "Error:" in line:
            print(line)
    if run.returncode < 0:
        print("compiler killed by signal %d" % -run.returncode)
    if same:
        print("The bug reproduces.")
        return 1
    print("The compile fails, but not with the expected failure: " + EXPECTED_MESSAGE.pattern)
    return 2


if __name__ == "__main__":
    sys.exit(main())
