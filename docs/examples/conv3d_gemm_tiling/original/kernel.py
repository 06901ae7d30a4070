"""Point-cloud voxel branch: a 3-D convolution over a voxel grid, with bias and ReLU, written as a
MindSpore Hybrid DSL kernel (Custom op, func_type="hybrid")."""
from mindspore.ops import kernel


@kernel
def conv3d(x, w, bias):
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
