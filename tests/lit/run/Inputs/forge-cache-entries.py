"""Replaces the payload of every disk-cache entry in a folder with junk
under a valid header (codegen/DiskCache.cpp: magic, key, size, FNV-1a
checksum), so that only loading the payload can tell it is wrong."""
import pathlib
import struct
import sys


def fnv1a(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


for entry in pathlib.Path(sys.argv[1]).iterdir():
    header = entry.read_bytes()[:40]  # magic and key
    junk = b"not an object file" * 8
    entry.write_bytes(header + struct.pack("<QQ", len(junk), fnv1a(junk)) + junk)
