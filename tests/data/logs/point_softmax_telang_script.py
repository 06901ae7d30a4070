"""The script whose output is point_softmax_telang.log beside it: MindSpore 2.10.0 (CPU wheel), a TeLang softmax
through ops.Custom(func_type="akg"); AKG fails `Check failed: ex.as<IntImm>()` and the script ends with
`RuntimeError: Response is empty.`"""

import numpy as np
import mindspore as ms
from mindspore import Tensor, ops


def point_softmax(x):
    n, c = x.shape
    k = tvm.reduce_axis((0, c), name="k")
    mx = tvm.compute((n,), lambda i: tvm.max(x[i, k], axis=k), name="mx")
    e = tvm.compute((n, c), lambda i, j: tvm.exp(x[i, j] - mx[i]), name="e")
    k2 = tvm.reduce_axis((0, c), name="k2")
    s = tvm.compute((n,), lambda i: tvm.sum(e[i, k2], axis=k2), name="s")
    return tvm.compute((n, c), lambda i, j: e[i, j] / s[i], name="out")


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    scores = Tensor(np.random.default_rng(0).standard_normal((1024, 40)).astype(np.float32))
    softmax = ops.Custom(point_softmax, out_shape=lambda x: x, out_dtype=lambda x: x, func_type="akg")
    print(softmax(scores).asnumpy().sum(axis=1)[:4])
