"""Writes a .npz of f32 arrays with the standard library only (CI has no NumPy).

Usage: make_npz.py OUT.npz NAME=SHAPE[:f64]...   e.g. make_npz.py data.npz x=8,1024 y=8,1024:f64
Each array is filled, in row-major order, with a fixed pattern of values in [-0.5, 0.5); it is
f32 unless its spec ends in :f64 (NumPy's default dtype).
"""
import struct
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1], "w") as archive:
    for spec in sys.argv[2:]:
        name, shape_text = spec.split("=")
        shape_text, _, dtype = shape_text.partition(":")
        descr, code = ("<f8", "d") if dtype == "f64" else ("<f4", "f")
        shape = tuple(int(d) for d in shape_text.split(","))
        count = 1
        for dim in shape:
            count *= dim
        header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
        header += " " * (63 - (10 + len(header)) % 64) + "\n"
        values = [((i * 7919) % 97) / 97.0 - 0.5 for i in range(count)]
        archive.writestr(name + ".npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                         header.encode("latin1") + struct.pack(f"<{count}{code}", *values))
