#!/usr/bin/env python3
"""Prints simple pixel statistics of a PNG (8-bit RGB or RGBA, not interlaced),
with the standard library only, for the browser test of `kiln report`
(tests/tools/report_cli_test.cc):

    width height nonwhite_fraction distinct_colors count_of_COLOR

COLOR (hex, e.g. 2563eb, optional) is counted within a tolerance of 40 per
channel, so that anti-aliased strokes still count.
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: unsupported PNG (depth {depth}, color type {ctype})")
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = read_png(sys.argv[1])
    want = None
    if len(sys.argv) > 2:
        h = sys.argv[2]
        want = (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    nonwhite, colors, hits = 0, set(), 0
    for line in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 245 or g < 245 or b < 245:
                nonwhite += 1
            colors.add((r, g, b))
            if want and abs(r - want[0]) <= 40 and abs(g - want[1]) <= 40 and abs(b - want[2]) <= 40:
                hits += 1
    print(width, height, f"{nonwhite / float(width * height):.4f}", len(colors), hits)


if __name__ == "__main__":
    main()
