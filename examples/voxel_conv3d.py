"""A point-cloud voxel branch as a MindSpore user writes it: a 3-D convolution over an occupancy grid, with
bias and ReLU, as a Hybrid DSL kernel run through ops.Custom(func_type="hybrid") on CPU. AKG fails to
compile it (`Check failed: gemm_m.size() <= FormatM.size()` in its auto-tiling) and the script stops with
`RuntimeError: Response is empty.`

    reduce capture -- python examples/voxel_conv3d.py
"""

import numpy as np

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import kernel


@kernel
def conv3d_relu(x, w, bias):
    # x: [N, C, D, H, W] voxel features; w: [O, C, KD, KH, KW]; bias: [O]
    y = output_tensor((x.shape[0], w.shape[0], x.shape[2] - w.shape[2] + 1, x.shape[3] - w.shape[3] + 1,
                       x.shape[4] - w.shape[4] + 1), x.dtype)
    acc = allocate((x.shape[0], w.shape[0], x.shape[2] - w.shape[2] + 1, x.shape[3] - w.shape[3] + 1,
                    x.shape[4] - w.shape[4] + 1), x.dtype)
    for b in range(y.shape[0]):
        for oc in range(y.shape[1]):
            for z in range(y.shape[2]):
                for i in range(y.shape[3]):
                    for j in range(y.shape[4]):
                        acc[b, oc, z, i, j] = 0.0
                        for ic in range(x.shape[1]):
                            for dz in range(w.shape[2]):
                                for di in range(w.shape[3]):
                                    for dj in range(w.shape[4]):
                                        acc[b, oc, z, i, j] = acc[b, oc, z, i, j] + \
                                            x[b, ic, z + dz, i + di, j + dj] * w[oc, ic, dz, di, dj]
    for b in range(y.shape[0]):
        for oc in range(y.shape[1]):
            for z in range(y.shape[2]):
                for i in range(y.shape[3]):
                    for j in range(y.shape[4]):
                        y[b, oc, z, i, j] = max(acc[b, oc, z, i, j] + bias[oc], 0.0)
    return y


def voxelize(points: np.ndarray, grid: int) -> np.ndarray:
    """Occupancy of a grid x grid x grid voxel grid over points in [0, 1)^3, one channel per coordinate."""
    cells = np.clip((points * grid).astype(int), 0, grid - 1)
    features = np.zeros((1, 4, grid, grid, grid), np.float32)
    for (i, j, k), p in zip(cells, points, strict=True):
        features[0, :3, i, j, k] = p
        features[0, 3, i, j, k] = 1.0
    return features


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    rng = np.random.default_rng(0)
    voxels = Tensor(voxelize(rng.random((256, 3)), 8))
    weights = Tensor(rng.standard_normal((8, 4, 3, 3, 3)).astype(np.float32))
    bias = Tensor(np.zeros(8, np.float32))
    conv = ops.Custom(conv3d_relu, func_type="hybrid")
    print("voxel features:", conv(voxels, weights, bias).shape)
