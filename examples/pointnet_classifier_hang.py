"""The last layer of a PointNet classifier in plain MindSpore ops: the global feature [1, 128], centred
and scaled, times the [128, 10] class weights. With graph-kernel fusion and MatMul clustered, AKG aborts
while compiling the MatMul (`isl_val.c: position or range out of bounds`, SIGABRT) and MindSpore then
waits for its dead compile server: the script hangs and prints no compile error. `reduce capture` ends
it once it has stalled (or at --timeout) and finds the kernel MindSpore wrote but never built:

    reduce capture --timeout 60 -- python examples/pointnet_classifier_hang.py
"""

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops


class Classifier(nn.Cell):
    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        rng = np.random.default_rng(0)
        self.weight = Parameter(Tensor(rng.standard_normal((channels, classes)).astype(np.float32)))

    def construct(self, feature):
        feature = (feature - feature.max(axis=1, keepdims=True)) * 0.5
        return ops.matmul(feature, self.weight)


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE, enable_graph_kernel=True, graph_kernel_flags="--enable_cluster_ops=MatMul")
    ms.set_device("CPU")
    feature = Tensor(np.random.default_rng(1).random((1, 128)).astype(np.float32))
    print("class scores:", Classifier(128, 10)(feature).shape)
