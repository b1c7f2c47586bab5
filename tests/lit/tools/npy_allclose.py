"""Compares two little-endian f32/i64 .npy files elementwise, with the standard library only
(CI has no NumPy): |a - b| <= rtol * max(1, |b|), or with --normwise
|a - b| <= rtol * max_j |b_j|, the measure for results of long sums computed in two orders
(whose errors scale with the terms, not with a result that cancels to near zero).

Usage: npy_allclose.py [--normwise] A.npy B.npy [RTOL]   (exit 0 when close, else 1)
"""
import ast
import struct
import sys

FORMATS = {"<f4": "f", "<i8": "q", "<i4": "i", "<f2": "e"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", f"{path}: not a .npy file"
    major = data[6]
    header_len = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    code = FORMATS[header["descr"]]
    count = 1
    for dim in header["shape"]:
        count *= dim
    body = data[start + header_len:]
    return header["shape"], struct.unpack(f"<{count}{code}", body[:count * struct.calcsize(code)])


def main():
    args = sys.argv[1:]
    normwise = args[0] == "--normwise"
    if normwise:
        args = args[1:]
    rtol = float(args[2]) if len(args) > 2 else 1e-5
    shape_a, a = load(args[0])
    shape_b, b = load(args[1])
    if shape_a != shape_b:
        sys.exit(f"shapes differ: {shape_a} and {shape_b}")
    scale = max([1.0] + [abs(y) for y in b]) if normwise else None
    for i, (x, y) in enumerate(zip(a, b)):
        if not abs(x - y) <= rtol * (scale if normwise else max(1.0, abs(y))):
            sys.exit(f"element {i} differs: {x} and {y}")
    print(f"close: {len(a)} elements")


main()
