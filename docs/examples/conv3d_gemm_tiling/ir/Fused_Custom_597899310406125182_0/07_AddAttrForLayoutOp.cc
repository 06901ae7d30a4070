// attr [hybrid(conv3d, 0x56492308d030)for (b, 0, 1) {
  for (z, 0, 3) {
    for (i, 0, 3) {
      for (j, 0, 3) {
        y(b, z, i, j) = 0f
        for (ic, 0, 1) {
          y(b, z, i, j) = (y(b, z, i, j) + (input_0(ic, z, i, j)*input_1(ic)))
        }
      }
    }
  }
}

] realize_scope = ""
realize conv3d<float32>([0, 1], [0, 3], [0, 3], [0, 3]) {
  produce conv3d {
    // attr [[buffer(buffer, 0x564922f66010), Tensor(shape=[1, 3, 3, 3], op.name=input_0)]] buffer_bind_scope = tvm_tuple(0, 1, 0, 3, 0, 3, 0, 3):handle:I
    // attr [[buffer(buffer, 0x5649231ce640), Tensor(shape=[1], op.name=input_1)]] buffer_bind_scope = tvm_tuple(0, 1):handle:I
    // attr [[buffer(buffer, 0x564923231300), Tensor(shape=[1, 3, 3, 3], op.name=conv3d)]] buffer_bind_scope = tvm_tuple(0, 1, 0, 3, 0, 3, 0, 3):handle:I
    // attr [0] extern_scope = 0
    for (b, 0, 1) {
      for (z, 0, 3) {
        for (i, 0, 3) {
          for (j, 0, 3) {
            conv3d(b, z, i, j) = 0f
            for (ic, 0, 1) {
              conv3d(b, z, i, j) = (conv3d(b, z, i, j) + (input_0(ic, z, i, j)*input_1(ic)))
            }
          }
        }
      }
    }
  }
}
