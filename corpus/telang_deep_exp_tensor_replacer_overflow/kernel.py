def nested_exp(x):
    # x [N] -> out [N]: exp applied 8000 times over, a deep composition of one unary op; TVM's tensor
    # replacer recurses once per call while AKG's schedule is normalised
    def body(i):
        acc = x[i]
        for _ in range(8000):
            acc = tvm.exp(acc)
        return acc

    return tvm.compute(x.shape, body, name="out")
