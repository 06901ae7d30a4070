"""How the .info files beside this script were written: MindSpore 2.10.0 (CPU wheel), GRAPH_MODE, one Custom op
with an attr each, in a Cell, run in an empty dir (MindSpore leaves each kernel's JSON in akg_kernel_meta/;
imply_path was then set to this script's name). An op attr reaches AKG only when reg_info names it and
add_prim_attr gives its value: without add_prim_attr MindSpore writes `attr_names` but no value, and AKG's call
of the function fails (`missing 1 required positional argument: 'scale'`). `te_scale`: TeLang, the attr a
parameter after the inputs; `ib_scale`: ir_builder, the attr read from the attrs dict."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import CustomRegOp, DataType

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")


def te_scale(a, scale):
    return tvm.compute(a.shape, lambda i, j: a[i, j] * scale, name="scaled")  # noqa: F821 - AKG's tvm


def ib_scale(inputs, attrs):
    a = inputs[0]

    def gen(ins, outs):
        ib = tvm.ir_builder.create()  # noqa: F821 - AKG's tvm
        with ib.for_range(0, 32, name="i") as i:
            ib.store(outs[0], i, ib.load(ins[0], i) * attrs["scale"])
        return ib.get()

    return tvm.extern(a.shape, [a], gen, dtype=a.dtype, name="y")  # noqa: F821 - AKG's tvm


class Scaled(nn.Cell):
    def __init__(self, func, name, scale):
        super().__init__()
        info = (
            CustomRegOp(name)
            .input(0, "a")
            .output(0, "y")
            .attr("scale", "required", "float", value=scale)
            .dtype_format(DataType.F32_Default, DataType.F32_Default)
            .target("CPU")
            .get_op_info()
        )
        self.op = ops.Custom(func, out_shape=lambda a: a, out_dtype=lambda a: a, func_type="akg", reg_info=info)
        self.op.add_prim_attr("scale", scale)

    def construct(self, x):
        return self.op(x)


print("te", Scaled(te_scale, "te_scale", 0.5)(Tensor(np.ones((4, 8), np.float32))).asnumpy().sum())
print("ib", Scaled(ib_scale, "ib_scale", 0.25)(Tensor(np.ones((32,), np.float32))).asnumpy().sum())
