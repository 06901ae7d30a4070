from mindspore.ops import kernel


@kernel
def nearest_sq_distance(points, queries):
    # points [B, N, 3], queries [B, Q, 3] -> best [B, Q]: squared distance from each query to its
    # nearest point; the first coordinate starts the sum, the loop over k adds the others
    best = output_tensor((queries.shape[0], queries.shape[1]), points.dtype)
    for b in range(queries.shape[0]):
        for q in range(queries.shape[1]):
            best[b, q] = 1e30
            for p in range(points.shape[1]):
                d = (points[b, p, 0] - queries[b, q, 0]) * (points[b, p, 0] - queries[b, q, 0])
                for k in range(1, points.shape[2]):
                    d = d + (points[b, p, k] - queries[b, q, k]) * (points[b, p, k] - queries[b, q, k])
                if d < best[b, q]:
                    best[b, q] = d
    return best
