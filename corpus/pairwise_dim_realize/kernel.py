def pairwise(x):
    out = output_tensor((x.shape[0], x.shape[1], x.shape[1]), x.dtype)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(x.shape[1]):
                out[b, i, j] = 0.0
                for k in range(x.shape[2]):
                    out[b, i, j] = out[b, i, j] + (x[b, i, k] - x[b, j, k]) * (x[b, i, k] - x[b, j, k])
    return out
