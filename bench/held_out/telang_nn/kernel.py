def nearest_distance(src, dst):
    n, d = src.shape
    m = dst.shape[0]
    r = tvm.reduce_axis((0, d), name="r")
    dist = tvm.compute(
        (n, m), lambda i, j: tvm.sum((src[i, r] - dst[j, r]) * (src[i, r] - dst[j, r]), axis=r), name="dist"
    )
    q = tvm.reduce_axis((0, m), name="q")
    return tvm.compute((n,), lambda i: tvm.min(dist[i, q], axis=q), name="nearest")
