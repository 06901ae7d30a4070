def cast_to_half(x):
    return tvm.compute(x.shape, lambda i, j: (x[i, j] * 3.0).astype("float16"), name="y")
