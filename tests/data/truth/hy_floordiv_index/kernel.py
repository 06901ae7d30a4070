from mindspore.ops import kernel


@kernel
def floordiv_in_index(x):
    # a store index holding INT64_MIN // (i - i - 1): folded when the index is simplified
    out = output_tensor(x.shape, x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i] + int64(-9223372036854775808) // int64(i - i - 1)
    return out
