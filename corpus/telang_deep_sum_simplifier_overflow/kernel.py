def unrolled_neighbour_sum(x):
    # x [N] -> out [N]: each point's feature summed with itself 8000 times, written as the unrolled chain a
    # code generator emits; TVM's simplifier recurses once per term while AKG lowers it
    def body(i):
        acc = x[i]
        for _ in range(8000):
            acc = acc + x[i]
        return acc

    return tvm.compute(x.shape, body, name="out")
