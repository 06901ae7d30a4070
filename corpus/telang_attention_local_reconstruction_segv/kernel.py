def point_attention(q, k, v):
    n, d = q.shape
    m = k.shape[0]
    r = tvm.reduce_axis((0, d), name="r")
    dot = tvm.compute((n, m), lambda i, j: tvm.sum(q[i, r] * k[j, r], axis=r), name="dot")
    score = tvm.compute((n, m), lambda i, j: dot[i, j] * 0.17677669, name="score")
    t = tvm.reduce_axis((0, m), name="t")
    mx = tvm.compute((n,), lambda i: tvm.max(score[i, t], axis=t), name="mx")
    e = tvm.compute((n, m), lambda i, j: tvm.exp(score[i, j] - mx[i]), name="e")
    t2 = tvm.reduce_axis((0, m), name="t2")
    s = tvm.compute((n,), lambda i: tvm.sum(e[i, t2], axis=t2), name="s")
    t3 = tvm.reduce_axis((0, m), name="t3")
    num = tvm.compute((n, d), lambda i, c: tvm.sum(e[i, t3] * v[t3, c], axis=t3), name="num")
    return tvm.compute((n, d), lambda i, c: num[i, c] / s[i], name="out")
