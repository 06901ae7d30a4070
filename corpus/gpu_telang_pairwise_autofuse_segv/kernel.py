def pairwise_sqdist(a, b):
    k = tvm.reduce_axis((0, a.shape[1]), name="k")
    return tvm.compute((a.shape[0], b.shape[0]),
                       lambda i, j: tvm.sum((a[i, k] - b[j, k]) * (a[i, k] - b[j, k]), axis=k), name="dist")
