def fp16_overflow_cancels(x):
    big = tvm.compute(x.shape, lambda i, j: x[i, j] * tvm.const(284.0, x.dtype), name="big")
    square = tvm.compute(x.shape, lambda i, j: big[i, j] * big[i, j], name="square")
    twice = tvm.compute(x.shape, lambda i, j: (big[i, j] + big[i, j]) * big[i, j], name="twice")
    return tvm.compute(x.shape, lambda i, j: twice[i, j] - square[i, j] - square[i, j] + x[i, j], name="y")
