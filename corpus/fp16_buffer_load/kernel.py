from mindspore.ops import kernel


@kernel
def point_attention_weights(scores, temperature):
    """Point-transformer neighbour attention in float16: a numerically stable softmax over the K
    neighbours of every point, with a learned temperature per head."""
    out = output_tensor(scores.shape, scores.dtype)
    row_max = allocate((scores.shape[0], scores.shape[1]), scores.dtype)
    row_sum = allocate((scores.shape[0], scores.shape[1]), scores.dtype)
    for b in range(scores.shape[0]):
        for i in range(scores.shape[1]):
            row_max[b, i] = -60000.0
            for j in range(scores.shape[2]):
                row_max[b, i] = max(row_max[b, i], scores[b, i, j] * temperature[b])
            row_sum[b, i] = 0.0
            for j in range(scores.shape[2]):
                out[b, i, j] = exp(scores[b, i, j] * temperature[b] - row_max[b, i])
                row_sum[b, i] = row_sum[b, i] + out[b, i, j]
            for j in range(scores.shape[2]):
                out[b, i, j] = out[b, i, j] / row_sum[b, i]
    return out
