from mindspore.ops import kernel


@kernel
def farthest_point_sampling(xyz):
    """PointNet++ sampling: pick 4 of each cloud's points, each the farthest from those picked so far
    (squared distances, starting from point 0); returns the picked indices."""
    picked = output_tensor((xyz.shape[0], 4), "int32")
    nearest = allocate((xyz.shape[0], xyz.shape[1]), xyz.dtype)
    for b in range(xyz.shape[0]):
        for n in range(xyz.shape[1]):
            nearest[b, n] = 1e10
        picked[b, 0] = 0
        for s in range(1, 4):
            farthest = 0
            for n in range(xyz.shape[1]):
                d = 0.0
                for c in range(3):
                    diff = xyz[b, n, c] - xyz[b, picked[b, s - 1], c]
                    d = d + diff * diff
                nearest[b, n] = min(nearest[b, n], d)
                if nearest[b, n] > nearest[b, farthest]:
                    farthest = n
            picked[b, s] = farthest
    return picked
