from mindspore.ops import kernel


@kernel
def attention_head(features, weights):
    """A point-cloud classifier head in Hybrid DSL: a softmax over the channels of each cloud's global
    feature weights the feature (channel attention), then a linear layer to the class scores."""
    scores = output_tensor((features.shape[0], weights.shape[1]), features.dtype)
    attention = allocate(features.shape, features.dtype)
    total = allocate((features.shape[0],), features.dtype)
    for b in range(features.shape[0]):
        total[b] = 0.0
        for c in range(features.shape[1]):
            attention[b, c] = exp(features[b, c])
            total[b] = total[b] + attention[b, c]
        for c in range(features.shape[1]):
            attention[b, c] = attention[b, c] / total[b] * features[b, c]
        for j in range(weights.shape[1]):
            scores[b, j] = 0.0
            for c in range(features.shape[1]):
                scores[b, j] = scores[b, j] + attention[b, c] * weights[c, j]
    return scores
