def truncdiv_by_minus_one(x):
    low = tvm.const(-9223372036854775808, "int64")
    return tvm.compute(x.shape, lambda i: x[i] + tvm.truncdiv(low, i.astype("int64") - i.astype("int64") - 1), name="out")
