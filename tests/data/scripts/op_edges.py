"""Small nets whose fused kernels sit where a wrong-result check is easily fooled, run with graph-kernel fusion
on CPU: integer and float16 division of negative operands (truncating and flooring), ops defined on part of
[-1, 1) only (Log, Sqrt), a float cast to uint8, float16 arithmetic compared (fused with the Select it feeds)
and summed (MindSpore sums it in float32), float16 arithmetic handed on as float32, and float32 Exp. The script passes (its results are not checked
here: `reduce capture --check-always` checks what each fused kernel computes)."""

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops


class IntegerDivision(nn.Cell):
    def construct(self, a, b):
        return ops.FloorDiv()(a * 3, b) + ops.FloorMod()(a, b) + ops.RealDiv()(a, b)


class HalfFloorDivision(nn.Cell):
    def construct(self, a, b):
        return ops.FloorDiv()(a * 2, b) + 1


class LogOfRoot(nn.Cell):
    def construct(self, x):
        return ops.log(x) * 2 + ops.sqrt(x - 0.5)


class ToBytes(nn.Cell):
    def construct(self, x):
        return ops.cast(x * 255 + 0.5, ms.uint8) + 1


class HalfSelectAndSum(nn.Cell):
    def construct(self, a, b, c):
        return ops.select((a * b) > c, a + 1, b * 2) * 3, ops.ReduceSum(keep_dims=True)(a * b, 1) + 1


class HalfToSingle(nn.Cell):
    def construct(self, a, b, c):
        return ops.cast(a * b + c, ms.float32) * 2.0


class Softplus(nn.Cell):
    def construct(self, x):
        return ops.exp(x) * 0.5 + x


if __name__ == "__main__":
    # MindSpore's CPU fusion leaves FloorDiv, FloorMod and Greater out of fused kernels unless asked
    ms.set_context(mode=ms.GRAPH_MODE, enable_graph_kernel=True, jit_config={"jit_level": "O1"},
                   graph_kernel_flags="--enable_cluster_ops=FloorDiv,FloorMod,Greater")
    ms.set_device("CPU")
    rng = np.random.default_rng(0)
    ints = [Tensor(rng.integers(-50, 50, (64,)).astype(np.int32)), Tensor(rng.integers(1, 9, (64,)).astype(np.int32))]
    print(IntegerDivision()(*ints).asnumpy()[:4])
    halves = [Tensor(rng.uniform(-4, 4, (64,)).astype(np.float16)), Tensor(rng.uniform(1, 2, (64,)).astype(np.float16))]
    print(HalfFloorDivision()(*halves).asnumpy()[:4])
    print(LogOfRoot()(Tensor(rng.uniform(1, 2, (64,)).astype(np.float32))).asnumpy()[:4])
    print(ToBytes()(Tensor(rng.uniform(0, 0.9, (64,)).astype(np.float32))).asnumpy()[:4])
    half = [Tensor(rng.uniform(-1, 1, (8, 256)).astype(np.float16)) for _ in range(3)]
    print(HalfSelectAndSum()(*half)[0].asnumpy()[0, :4])
    print(HalfToSingle()(*half).asnumpy()[0, :4])
    print(Softplus()(Tensor(rng.uniform(-1, 1, (256,)).astype(np.float32))).asnumpy()[:4])
