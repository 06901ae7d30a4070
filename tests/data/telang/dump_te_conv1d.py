"""How Fused_Custom_5358066002288502.info beside this script was written: MindSpore 2.10.0 (CPU wheel), the
TeLang conv1d of issue 32 through ops.Custom(func_type="akg") in GRAPH_MODE, run in /tmp/te1; MindSpore wrote the
.info to akg_kernel_meta/, AKG died by SIGSEGV compiling it and the script then waited forever."""

import numpy as np
import mindspore as ms
from mindspore import ops, Tensor, context
context.set_context(mode=context.GRAPH_MODE, device_target="CPU")

def te_conv1d(x, w):
    k = tvm.reduce_axis((0, w.shape[0]), name="k")
    return tvm.compute((x.shape[0], x.shape[1] - w.shape[0] + 1),
                       lambda n, i: tvm.sum(x[n, i + k] * w[k], axis=k))

op = ops.Custom(te_conv1d, out_shape=lambda x, w: (x[0], x[1]-w[0]+1), out_dtype=lambda x, w: x, func_type="akg")
x = Tensor(np.ones((2, 32), np.float32)); w = Tensor(np.ones((3,), np.float32))
print(op(x, w))
