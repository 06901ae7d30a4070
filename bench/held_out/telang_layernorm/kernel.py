def point_layer_norm(x, gamma, beta):
    n, c = x.shape
    k = tvm.reduce_axis((0, c), name="k")
    mean = tvm.compute((n,), lambda i: tvm.sum(x[i, k] / c, axis=k), name="mean")
    d = tvm.compute((n, c), lambda i, j: x[i, j] - mean[i], name="centered")
    k2 = tvm.reduce_axis((0, c), name="k2")
    var = tvm.compute((n,), lambda i: tvm.sum(d[i, k2] * d[i, k2] / c, axis=k2), name="var")
    return tvm.compute(
        (n, c),
        lambda i, j: d[i, j] / tvm.sqrt(var[i] + tvm.const(1e-5, "float32")) * gamma[j] + beta[j],
        name="normed",
    )
