def point_cross_entropy(logits, labels):
    n, c = logits.shape
    k = tvm.reduce_axis((0, c), name="k")
    mx = tvm.compute((n,), lambda i: tvm.max(logits[i, k], axis=k), name="mx")
    k2 = tvm.reduce_axis((0, c), name="k2")
    se = tvm.compute((n,), lambda i: tvm.sum(tvm.exp(logits[i, k2] - mx[i]), axis=k2), name="se")
    k3 = tvm.reduce_axis((0, c), name="k3")
    picked = tvm.compute(
        (n,), lambda i: tvm.sum(tvm.if_then_else(labels[i] == k3, logits[i, k3], 0.0), axis=k3), name="picked"
    )
    return tvm.compute((n,), lambda i: tvm.log(se[i]) + mx[i] - picked[i], name="loss")
