"""The data of f64-slices-train.yaml, and its trained w checked against one SGD step computed
here by hand, in Python floats (doubles), with the standard library only.

Usage: f64-slices-train.py data OUT.npz
       f64-slices-train.py check SAVED.safetensors
"""
import json
import struct
import sys
import zipfile

N, FEATURES, LR = 4, 6, 0.1
# Values with low bits f32 would drop: the check holds to 1e-12.
X = [[1.0 + (n * FEATURES + k) * 1e-9 + 0.25 * k for k in range(FEATURES)] for n in range(N)]
Y = [[0.5 * n - 0.1 * j for j in range(2)] for n in range(N)]


def npy(rows):
    shape = (len(rows), len(rows[0]))
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    values = [v for row in rows for v in row]
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") +
            struct.pack(f"<{len(values)}d", *values))


def expected_w():
    w = [1.0] * FEATURES
    h = [[X[n][k] * w[k] for k in range(FEATURES)] for n in range(N)]
    grad = [0.0] * FEATURES
    for n in range(N):
        for j in range(2):
            s = h[n][1 + j] + h[n][3 + j] + h[n][j]
            d_s = 2.0 * (s - Y[n][j]) / (N * 2)
            for k in (1 + j, 3 + j, j):  # the columns s[:, j] reads
                grad[k] += X[n][k] * d_s
    return [w[k] - LR * grad[k] for k in range(FEATURES)]


def saved_w(path):
    data = open(path, "rb").read()
    length = struct.unpack("<Q", data[:8])[0]
    entry = json.loads(data[8:8 + length])["w"]
    assert entry["dtype"] == "F64" and entry["shape"] == [FEATURES], entry
    begin, end = entry["data_offsets"]
    return list(struct.unpack(f"<{FEATURES}d", data[8 + length + begin:8 + length + end]))


if sys.argv[1] == "data":
    with zipfile.ZipFile(sys.argv[2], "w") as archive:
        archive.writestr("x.npy", npy(X))
        archive.writestr("y.npy", npy(Y))
else:
    got, want = saved_w(sys.argv[2]), expected_w()
    assert all(abs(g - e) <= 1e-12 * max(1.0, abs(e)) for g, e in zip(got, want)), (got, want)
    assert got[5] == 1.0, "w[5] is read by no piece: its gradient is 0"
    print("w as one SGD step makes it")
