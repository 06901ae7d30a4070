from mindspore.ops import kernel


@kernel
def point_mean_pool(x, bias):
    # x [B, N, C] point features -> y [B, C]: mean over the N points of each cloud, plus a per-channel bias
    y = output_tensor((x.shape[0], x.shape[2]), x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            y[b, c] = 0.0
            for n in range(x.shape[1]):
                y[b, c] = y[b, c] + x[b, n, c]
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            y[b, c] = y[b, c] / x.shape[1] + bias[c]
    return y
