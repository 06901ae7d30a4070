"""A PointNet classifier head with channel attention, in plain MindSpore ops: softmax attention over the
per-point features, a weighted linear layer and log-softmax. With graph-kernel fusion on (as `jit_level`
O1 turns on by default on GPU and as CPU users enable it), MindSpore clusters the MatMul with its bias into
one AKG kernel, which AKG fails to compile (`Check failed: attrs.count("dst_type")`); the script stops with
`RuntimeError: Response is empty.`

    reduce capture -- python examples/pointnet_head_fusion.py
"""

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops


class AttentionHead(nn.Cell):
    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        rng = np.random.default_rng(0)
        self.weight = Parameter(Tensor(rng.standard_normal((channels, classes)).astype(np.float32)))
        self.bias = Parameter(Tensor(np.zeros(classes, np.float32)))

    def construct(self, features, scores):
        attention = ops.exp(scores) / ops.exp(scores).sum(axis=1, keepdims=True)
        logits = ops.matmul(features * attention, self.weight) + self.bias
        return ops.log_softmax(logits, axis=1)


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE, enable_graph_kernel=True, graph_kernel_flags="--enable_cluster_ops=MatMul")
    ms.set_device("CPU")
    rng = np.random.default_rng(1)
    features = Tensor(rng.random((3, 17)).astype(np.float32))
    scores = Tensor(rng.random((3, 17)).astype(np.float32))
    print("class scores:", AttentionHead(17, 1)(features, scores).shape)
