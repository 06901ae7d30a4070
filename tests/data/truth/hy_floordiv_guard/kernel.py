from mindspore.ops import kernel


@kernel
def guarded_floordiv(x):
    # a guard whose condition divides INT64_MIN by (i - i - 1): folded when the guard is simplified
    out = output_tensor(x.shape, x.dtype)
    for i in range(x.shape[0]):
        if x[i] > int64(-9223372036854775808) // int64(i - i - 1):
            out[i] = x[i]
        else:
            out[i] = x[i] + x[i]
    return out
