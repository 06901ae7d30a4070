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
