def floordiv_by_minus_one(x):
    # INT64_MIN // (i - i - 1): the simplifier folds the divisor to -1, then the folder divides and traps
    low = tvm.const(-9223372036854775808, "int64")
    return tvm.compute(x.shape, lambda i: x[i] + tvm.floordiv(low, i.astype("int64") - i.astype("int64") - 1), name="out")
