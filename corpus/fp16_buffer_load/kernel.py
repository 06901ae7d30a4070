def softmax_last(x):
    out = output_tensor(x.shape, x.dtype)
    s = allocate((x.shape[0], x.shape[1]), x.dtype)
    m = allocate((x.shape[0], x.shape[1]), x.dtype)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            m[b, i] = -1e30
            for j in range(x.shape[2]):
                m[b, i] = max(m[b, i], x[b, i, j])
            s[b, i] = 0.0
            for j in range(x.shape[2]):
                out[b, i, j] = exp(x[b, i, j] - m[b, i])
                s[b, i] = s[b, i] + out[b, i, j]
            for j in range(x.shape[2]):
                out[b, i, j] = out[b, i, j] / s[b, i]
    return out
