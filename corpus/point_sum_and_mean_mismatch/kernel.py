from mindspore.ops import kernel


@kernel
def point_sum_and_mean(x, mask):
    # x [B, N, C] point features, mask [B, N] (1.0 for a real point, 0.0 for padding)
    # -> total [B, C]: sum of the real points' features, mean [B, C]: their mean
    total = output_tensor((x.shape[0], x.shape[2]), x.dtype)
    mean = output_tensor((x.shape[0], x.shape[2]), x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            total[b, c] = 0.0
            for n in range(x.shape[1]):
                total[b, c] = total[b, c] + x[b, n, c] * mask[b, n]
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            mean[b, c] = total[b, c] / x.shape[1]
    return total, mean
