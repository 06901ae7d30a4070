from mindspore.ops import kernel


@kernel
def transpose_add(x):
    # point features [B, N, C] -> [B, C, N], each shifted by the first channel
    out = output_tensor((x.shape[0], x.shape[2], x.shape[1]), x.dtype)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(x.shape[2]):
                out[b, j, i] = x[b, i, j] + x[b, i, 0]
    return out
