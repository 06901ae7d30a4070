"""The point-cloud voxel branch of voxel_conv3d.py, moved to TeLang, AKG's tensor-expression language: a 3-D
convolution over an occupancy grid with bias and ReLU, written with `tvm.compute`, `tvm.reduce_axis` and
`tvm.sum`, run through ops.Custom(func_type="akg") on CPU. AKG dies by SIGSEGV while compiling it (in its
auto-fuse pass) and MindSpore then waits forever: the script never ends on its own.

    reduce capture --timeout 300 -- python examples/voxel_conv3d_telang.py
"""

import numpy as np

import mindspore as ms
from mindspore import Tensor, ops


def conv3d_bias_relu(x, w, bias):
    # x: [N, C, D, H, W] voxel features; w: [O, C, KD, KH, KW]; bias: [O]; `tvm` is given by AKG
    n, c, d, h, wd = x.shape
    o, _, kd, kh, kw = w.shape
    rc = tvm.reduce_axis((0, c), name="rc")
    rz = tvm.reduce_axis((0, kd), name="rz")
    ry = tvm.reduce_axis((0, kh), name="ry")
    rx = tvm.reduce_axis((0, kw), name="rx")
    conv = tvm.compute(
        (n, o, d - kd + 1, h - kh + 1, wd - kw + 1),
        lambda b, oc, z, i, j: tvm.sum(
            x[b, rc, z + rz, i + ry, j + rx] * w[oc, rc, rz, ry, rx], axis=[rc, rz, ry, rx]
        ),
        name="conv",
    )
    return tvm.compute(
        conv.shape,
        lambda b, oc, z, i, j: tvm.max(conv[b, oc, z, i, j] + bias[oc], tvm.const(0.0, x.dtype)),
        name="relu",
    )


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
    conv = ops.Custom(
        conv3d_bias_relu,
        out_shape=lambda x, w, b: (x[0], w[0], x[2] - w[2] + 1, x[3] - w[3] + 1, x[4] - w[4] + 1),
        out_dtype=lambda x, w, b: x,
        func_type="akg",
    )
    print("voxel features:", conv(voxels, weights, bias).shape)
