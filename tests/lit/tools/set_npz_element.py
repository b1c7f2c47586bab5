"""Copies a .npz with one element of one integer array changed, with the standard library only
(CI has no NumPy).

Usage: set_npz_element.py IN.npz OUT.npz ARRAY INDEX VALUE
ARRAY is an <i8 or <i4 array; INDEX counts its elements in row-major order.
"""
import ast
import struct
import sys
import zipfile

source, target, array, index, value = sys.argv[1:6]
with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as copy:
    for item in original.infolist():
        data = original.read(item.filename)
        if item.filename == array + ".npy":
            header_length = struct.unpack("<H", data[8:10])[0]
            header = ast.literal_eval(data[10:10 + header_length].decode("latin1"))
            code = {"<i8": "<q", "<i4": "<i"}[header["descr"]]
            at = 10 + header_length + int(index) * struct.calcsize(code)
            data = data[:at] + struct.pack(code, int(value)) + data[at + struct.calcsize(code):]
        copy.writestr(item.filename, data)
