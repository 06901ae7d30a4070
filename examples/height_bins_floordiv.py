"""Voxelise point heights: bin index = height // bin size, float16, with FloorDiv fused by MindSpore's graph
kernel (`--enable_cluster_ops=FloorDiv`). AKG's kernel rounds the quotient to float16 before flooring it, so
where the exact quotient lies just under an integer the point lands one bin too high: about 0.7 % of the
points here. MindSpore's own FloorDiv is exact, so with fusion off the assertion holds.

Run: python examples/height_bins_floordiv.py      (CPU; corpus/floordiv_fp16_rounds_quotient is its kernel)
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
ms.set_context(enable_graph_kernel=True, graph_kernel_flags="--enable_cluster_ops=FloorDiv")


class HeightBins(nn.Cell):
    def construct(self, heights, bin_size):
        return ops.cast(ops.floor_div(heights, bin_size), ms.int32)


rng = np.random.RandomState(0)
heights = rng.uniform(0.0, 10.0, (64, 1024)).astype(np.float16)
bin_size = rng.uniform(0.1, 0.5, (64, 1024)).astype(np.float16)
bins = HeightBins()(Tensor(heights), Tensor(bin_size)).asnumpy()
expected = np.floor(heights.astype(np.float64) / bin_size.astype(np.float64)).astype(np.int32)
wrong = int((bins != expected).sum())
print(f"{wrong} of {bins.size} bins wrong")
assert wrong == 0, f"{wrong} of {bins.size} points fall into the wrong bin"
