def exp_row_sum(x):
    n, c = x.shape
    k = tvm.reduce_axis((0, c), name="k")
    e = tvm.compute((n, c), lambda i, j: tvm.exp(x[i, j]) * 0.5 + x[i, j], name="e")
    return tvm.compute((n,), lambda i: tvm.sum(e[i, k], axis=k), name="s")
