from mindspore.ops import kernel


@kernel
def relative_features_cf(feat, mask, scale, offset):
    """Point features [B, N, C] to channel-first [B, C, N] for the next shared MLP: each feature is made
    relative to the point's first channel, scaled and shifted per channel (folded batch norm) and
    clipped (ReLU6); padded points (mask 0) get zero features, in one pass over the points."""
    feat_out = output_tensor((feat.shape[0], feat.shape[2], feat.shape[1]), feat.dtype)
    for b in range(feat.shape[0]):
        for i in range(feat.shape[1]):
            for j in range(feat.shape[2]):
                # relative feature of point i, channel j, stored channel-first
                rel = feat[b, i, j] + feat[b, i, 0]
                val = rel * scale[j] + offset[j]
                if mask[b, i] > 0.5:
                    feat_out[b, j, i] = min(max(val, 0.0), 6.0)
                else:
                    feat_out[b, j, i] = 0.0
    return feat_out
