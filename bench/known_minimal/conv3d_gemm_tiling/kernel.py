def conv3d(x, w):
    y = output_tensor((1, 2, 2, 2), x.dtype)
    for b in range(1):
        for z in range(2):
            for i in range(2):
                for j in range(2):
                    y[b, z, i, j] = 0.0
                    for k in range(2):
                        y[b, z, i, j] += x[z, i, j, k] * w[k]
    return y
