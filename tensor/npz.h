// NumPy .npz archives: the training data of `gxc train --data FILE.npz` (cli.md), one array per
// model input, named after it.
//
// An .npz is a zip archive (read and written with libzip) whose member NAME.npy holds array
// NAME as a .npy file (tensor/npy.h: the same dtypes, versions and checks). Members may be
// stored (np.savez) or deflated (np.savez_compressed); other compression methods and
// encryption are refused.
//
// Every malformed archive is refused with a gxc::Error of kind Model located at the file
// ("data.npz: error: ..."), naming the member when one is at fault. Nothing a header claims is
// allocated before it is checked against what the archive can hold.
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace gxc {

struct NpzArray {
  std::string name;  // the member's name without ".npy"
  Tensor tensor;
};

// The arrays of the archive at `path`, in the archive's order.
std::vector<NpzArray> readNpz(const std::string& path);

// Writes the arrays to `path` as np.savez does (stored members NAME.npy, in the given order),
// replacing any file there. There must be at least one array; names must be distinct and not
// empty. A failed write throws a gxc::Error of kind Runtime; writing to a temporary name and
// renaming is the caller's choice.
void writeNpz(const std::string& path, const std::vector<NpzArray>& arrays);

}  // namespace gxc
