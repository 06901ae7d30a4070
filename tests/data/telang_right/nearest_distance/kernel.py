def nearest_distance(q, r):
    m, _ = q.shape
    k, _ = r.shape
    j = tvm.reduce_axis((0, k), name="j")
    dist = tvm.compute(
        (m, k),
        lambda i, p: (q[i, 0] - r[p, 0]) * (q[i, 0] - r[p, 0])
        + (q[i, 1] - r[p, 1]) * (q[i, 1] - r[p, 1])
        + (q[i, 2] - r[p, 2]) * (q[i, 2] - r[p, 2]),
        name="dist",
    )
    return tvm.compute((m,), lambda i: tvm.min(dist[i, j], axis=j), name="best")
