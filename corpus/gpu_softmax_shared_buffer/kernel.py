"""Softmax over the neighbour scores of each point (attention weights of a point transformer), as a Hybrid
DSL kernel with a max and a sum kept in `allocate`d buffers."""
from mindspore.ops import kernel


@kernel
def neighbour_softmax(scores):
    # scores: [points, neighbours]
    y = output_tensor(scores.shape, scores.dtype)
    peak = allocate((scores.shape[0],), scores.dtype)
    total = allocate((scores.shape[0],), scores.dtype)
    for i in range(scores.shape[0]):
        peak[i] = scores[i, 0]
        for j in range(scores.shape[1]):
            peak[i] = max(peak[i], scores[i, j])
        total[i] = 0.0
        for j in range(scores.shape[1]):
            y[i, j] = exp(scores[i, j] - peak[i])
            total[i] = total[i] + y[i, j]
        for j in range(scores.shape[1]):
            y[i, j] = y[i, j] / total[i]
    return y
