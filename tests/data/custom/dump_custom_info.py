"""How the Fused_Custom_*.info files beside this script were written: MindSpore 2.10.0 (CPU wheel),
GRAPH_MODE, one ops.Custom call each, run in an empty dir; MindSpore leaves each kernel's JSON in
akg_kernel_meta/. `add`: func_type "hybrid", output shape inferred by MindSpore; `scale`: writes into its input
b and returns it (inplace_assign_output), out_shape given; `te_scale_add`: TeLang, func_type "akg" (MindSpore
makes it "tvm_compute"), out_shape and out_dtype given."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import kernel

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")


@kernel
def add(a, b):
    c = output_tensor((a.shape[0], b.shape[1]), a.dtype)  # noqa: F821 - a Hybrid DSL intrinsic
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = a[i, j] + b[i, j]
    return c


@kernel
def scale(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i] * 2.0
    return b


x = Tensor(np.ones((4, 8), np.float32))
print(ops.Custom(add, func_type="hybrid")(x, x).asnumpy().sum())
y = Tensor(np.ones((8,), np.float32))
print(ops.Custom(scale, out_shape=lambda a, b: b, out_dtype=lambda a, b: b, func_type="hybrid")(y, y).asnumpy().sum())


def te_scale_add(a, b):
    return tvm.compute(a.shape, lambda i, j: a[i, j] * 2.0 + b[j], name="scaled")


z = Tensor(np.ones((8,), np.float32))
te = ops.Custom(te_scale_add, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="akg")
print(te(x, z).asnumpy().sum())
