def conv3d(x, w):
    y = output_tensor((1, 3, 3, 3), x.dtype)
    for b in range(1):
        for z in range(3):
            for i in range(3):
                for j in range(3):
                    y[b, z, i, j] = 0.0
                    for ic in range(1):
                        y[b, z, i, j] += x[ic, z, i, j] * w[ic]
    return y
