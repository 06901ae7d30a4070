from mindspore.ops import kernel


@kernel
def center_and_transpose(xyz, feat):
    """PointNet++-style grouping prologue: center the points of each cloud on its centroid, scale them
    to the unit ball and hand the features to the next layer channel-first ([B, C, N])."""
    centroid = allocate((xyz.shape[0], 3), xyz.dtype)
    radius = allocate((xyz.shape[0],), xyz.dtype)
    xyz_out = output_tensor(xyz.shape, xyz.dtype)
    feat_out = output_tensor((feat.shape[0], feat.shape[2], feat.shape[1]), feat.dtype)
    for b in range(xyz.shape[0]):
        for c in range(3):
            centroid[b, c] = 0.0
            for n in range(xyz.shape[1]):
                centroid[b, c] = centroid[b, c] + xyz[b, n, c]
            centroid[b, c] = centroid[b, c] / xyz.shape[1]
        radius[b] = 0.0
        for n in range(xyz.shape[1]):
            d = (xyz[b, n, 0] - centroid[b, 0]) * (xyz[b, n, 0] - centroid[b, 0]) + \
                (xyz[b, n, 1] - centroid[b, 1]) * (xyz[b, n, 1] - centroid[b, 1]) + \
                (xyz[b, n, 2] - centroid[b, 2]) * (xyz[b, n, 2] - centroid[b, 2])
            radius[b] = max(radius[b], d)
        for n in range(xyz.shape[1]):
            for c in range(3):
                xyz_out[b, n, c] = (xyz[b, n, c] - centroid[b, c]) / (sqrt(radius[b]) + 1e-6)
    for b in range(feat.shape[0]):
        for i in range(feat.shape[1]):
            for j in range(feat.shape[2]):
                # channel-first features, each shifted by the point's first channel
                feat_out[b, j, i] = feat[b, i, j] + feat[b, i, 0]
    return xyz_out, feat_out
