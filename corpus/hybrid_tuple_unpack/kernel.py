def conv3d(x, w):
    n, c, d, h, ww = x.shape
    o = w.shape[0]
    kd = w.shape[2]
    kh = w.shape[3]
    kw = w.shape[4]
    od = d - kd + 1
    oh = h - kh + 1
    ow = ww - kw + 1
    y = output_tensor((n, o, od, oh, ow), x.dtype)
    for b in range(n):
        for oc in range(o):
            for z in range(od):
                for i in range(oh):
                    for j in range(ow):
                        y[b, oc, z, i, j] = 0.0
                        for ic in range(c):
                            for dz in range(kd):
                                for di in range(kh):
                                    for dj in range(kw):
                                        y[b, oc, z, i, j] = y[b, oc, z, i, j] + x[b, ic, z + dz, i + di, j + dj] * w[oc, ic, dz, di, dj]
    return y
