def window_energy(feat, weight, scale):
    """Energy of each point's feature window over the points before it (a causal window), scaled by an attr."""
    n, c = feat.shape
    w = weight.shape[0]
    k = tvm.reduce_axis((0, w))
    j = tvm.reduce_axis((0, c))
    return tvm.compute(
        (n,),
        lambda i: tvm.sum(tvm.if_then_else(i - k >= 0, feat[i - k, j] * weight[k] * scale, 0.0), axis=[k, j]),
    )
