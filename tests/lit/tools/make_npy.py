"""Writes a small .npy file with the standard library only (CI has no NumPy).

Usage: make_npy.py OUT.npy DTYPE SHAPE VALUE...   e.g. make_npy.py ids.npy i64 4 1 2 99 3
DTYPE is f32, f64 (NumPy's default), i64, u8 (images) or bool (values 0 and 1); SHAPE is comma-separated; the values fill the array in row-major order.
"""
import struct
import sys

path, dtype, shape_text, *values = sys.argv[1:]
shape = tuple(int(d) for d in shape_text.split(","))
descr, code, convert = {"f32": ("<f4", "f", float), "f64": ("<f8", "d", float),
                         "i64": ("<i8", "q", int), "u8": ("|u1", "B", int),
                         "bool": ("|b1", "?", lambda v: bool(int(v)))}[dtype]
header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
    f.write(struct.pack(f"<{len(values)}{code}", *(convert(v) for v in values)))
