"""A padded 3x3 conv2d (stride 1, zero padding 1) of a voxel-grid feature map, in TeLang."""
from akg import tvm


def conv2d(x, w):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    pad = tvm.compute((n, c, h + 2, wd + 2),
                      lambda b, ci, i, j: tvm.if_then_else(
                          tvm.all(i >= 1, i < h + 1, j >= 1, j < wd + 1), x[b, ci, i - 1, j - 1],
                          tvm.const(0, x.dtype)), name="pad")
    rc = tvm.reduce_axis((0, c), name="rc")
    ry = tvm.reduce_axis((0, kh), name="ry")
    rx = tvm.reduce_axis((0, kw), name="rx")
    return tvm.compute((n, o, h, wd),
                       lambda b, f, i, j: tvm.sum(pad[b, rc, i + ry, j + rx] * w[f, rc, ry, rx], axis=[rc, ry, rx]),
                       name="conv")
