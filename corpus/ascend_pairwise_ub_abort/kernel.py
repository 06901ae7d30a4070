from mindspore.ops import kernel


@kernel
def gaussian_affinity(x, gamma):
    """Dense affinity of a point cloud for spectral grouping: squared distances between all pairs of
    points, turned into a Gaussian kernel with a per-cloud bandwidth."""
    dist = allocate((x.shape[0], x.shape[1], x.shape[1]), x.dtype)
    out = output_tensor((x.shape[0], x.shape[1], x.shape[1]), x.dtype)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(x.shape[1]):
                dist[b, i, j] = 0.0
                for k in range(x.shape[2]):
                    dist[b, i, j] = dist[b, i, j] + (x[b, i, k] - x[b, j, k]) * (x[b, i, k] - x[b, j, k])
                out[b, i, j] = exp(-gamma[b] * dist[b, i, j])
    return out
