"""Point-cloud nearest-neighbour distance (the first step of three_nn / ball query): for every query
point, the squared distance to the closest reference point, written as a MindSpore Hybrid DSL kernel."""
from mindspore.ops import kernel


@kernel
def nearest_distance(query, ref):
    # query: [B, N, 3] points to match; ref: [B, M, 3] reference points -> dist: [B, N]
    dist = output_tensor((query.shape[0], query.shape[1]), query.dtype)
    for b in range(query.shape[0]):
        for n in range(query.shape[1]):
            dist[b, n] = 1e10
            for m in range(ref.shape[1]):
                dx = query[b, n, 0] - ref[b, m, 0]
                dy = query[b, n, 1] - ref[b, m, 1]
                dz = query[b, n, 2] - ref[b, m, 2]
                d = dx * dx + dy * dy + dz * dz
                if d < dist[b, n]:
                    dist[b, n] = d
    return dist
