def point_feature_stats(f):
    n, p, c = f.shape
    r = tvm.reduce_axis((0, p), name="r")
    total = tvm.compute((n, c), lambda b, ch: tvm.sum(f[b, r, ch], axis=r), name="total")
    mean = tvm.compute((n, c), lambda b, ch: total[b, ch] / p, name="mean")
    r2 = tvm.reduce_axis((0, p), name="r2")
    sq = tvm.compute((n, c), lambda b, ch: tvm.sum((f[b, r2, ch] - mean[b, ch]) * (f[b, r2, ch] - mean[b, ch]), axis=r2), name="sq")
    var = tvm.compute((n, c), lambda b, ch: sq[b, ch] / p, name="var")
    return [mean, var]
