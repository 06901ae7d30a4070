from mindspore.ops import kernel


@kernel
def guarded_cell_index(idx):
    # idx [N] int32 -> cell [N]: a voxel index guarded for an out-of-range point that never occurs at this
    # size; the guarded branch divides by a cell width that simplifies to zero, (i - i)
    cell = output_tensor(idx.shape, idx.dtype)
    for i in range(idx.shape[0]):
        if i > 1000:
            cell[i] = idx[i] // (i - i)
        else:
            cell[i] = idx[i]
    return cell
