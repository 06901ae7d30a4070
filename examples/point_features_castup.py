"""Half-precision point features turned to float32, transposed to channels-first and negated, checked
against numpy, in plain MindSpore ops (the net of MindSpore's own graph-kernel test
tests/st/graph_kernel/test_reorder_ops.py::test_castup). With graph-kernel fusion on, MindSpore's reorder
pass moves the Transpose before the Cast, and the AKG kernel of that float16 Transpose computes it wrongly:
nothing fails to compile, the script ends in its AssertionError.

    reduce capture --check-results -- python examples/point_features_castup.py
"""

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops


class ChannelsFirst(nn.Cell):
    def construct(self, features):
        return -ops.transpose(ops.cast(features, ms.float32), (1, 0))


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE, enable_graph_kernel=True, jit_config={"jit_level": "O1"})
    ms.set_device("CPU")
    features = np.random.default_rng(0).uniform(-2, 2, (16, 16)).astype(np.float16)
    got = ChannelsFirst()(Tensor(features)).asnumpy()
    expected = -features.astype(np.float32).T
    print("max |error|:", float(np.abs(got - expected).max()))
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-4), "channels-first features differ from numpy"
