#!/usr/bin/python3
"""Writes the hostile images into a folder (Pillow + jpegtran from libjpeg-turbo-progs).

  png16-rgba-7000.png   7000x7000 16-bit RGBA PNG, a few hundred KB (rows repeat: filter Up)
  png8-rgba-7000.png    7000x7000 8-bit RGBA PNG
  cmyk-prog-7000.jpg    7000x7000 CMYK progressive JPEG (Pillow, quality 75)
  scanbomb.jpg          7000x7000 progressive JPEG with 480 scans: jpegtran's most (100, successive
                        approximation), then its last scan repeated (libjpeg decodes each again)
  heavy64.jpg           4000x4000 progressive JPEG with 64 valid scans: heavy, within the limits
  ordinary.jpg          a 1600x1200 baseline photo-like JPEG (the ordinary cold thumbnail)
"""
import os, struct, subprocess, sys, tempfile, zlib
from PIL import Image

def png(path, width, height, depth):
    channels = 4
    sample = 2 if depth == 16 else 1
    row = bytearray()
    for x in range(width):
        v = x * (65535 if depth == 16 else 255) // max(1, width - 1)
        px = [v, (v * 7) % (65536 if depth == 16 else 256), 65535 - v if depth == 16 else 255 - v, 40000 if depth == 16 else 200]
        for c in px:
            row += c.to_bytes(sample, "big")
    first = b"\x00" + bytes(row)
    rest = b"\x02" + bytes(len(row))  # filter Up, identical rows: all zero
    comp = zlib.compressobj(9)
    data = comp.compress(first)
    for _ in range(height - 1):
        data += comp.compress(rest)
    data += comp.flush()
    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, depth, 6, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b""))

def gradient(mode, width, height):
    base = Image.linear_gradient("L").resize((width, height))
    if mode == "L":
        return base
    other = base.rotate(90)
    third = base.transpose(Image.FLIP_TOP_BOTTOM)
    bands = {"RGB": [base, other, third], "CMYK": [base, other, third, base.transpose(Image.FLIP_LEFT_RIGHT)]}[mode]
    return Image.merge(mode, bands)

def many_scans(path, width, height, bands, total=None):
    """AC coefficients of every component in `bands` bands, each in three
    successive-approximation passes: 1 + 3 components x bands x 3 scans (jpegtran allows 100);
    with `total`, the last scan is then repeated until there are `total` scans."""
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.jpg")
        gradient("RGB", width, height).save(base, quality=90, subsampling=0)
        script = ["0,1,2: 0-0, 0, 0;"]
        edges = [1 + i * 63 // bands for i in range(bands)] + [64]
        for c in range(3):
            for lo, hi in zip(edges, edges[1:]):
                script += [f"{c}: {lo}-{hi - 1}, 0, 2;", f"{c}: {lo}-{hi - 1}, 2, 1;", f"{c}: {lo}-{hi - 1}, 1, 0;"]
        spath = os.path.join(tmp, "scans.txt")
        open(spath, "w").write("\n".join(script) + "\n")
        subprocess.run(["jpegtran", "-scans", spath, "-outfile", path, base], check=True)
    scans = 1 + 3 * bands * 3
    if total and total > scans:
        data = open(path, "rb").read()
        last, end = data.rfind(b"\xff\xda"), data.rfind(b"\xff\xd9")
        data = data[:end] + data[last:end] * (total - scans) + data[end:]
        open(path, "wb").write(data)
        scans = total
    return scans

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "hostile"
    os.makedirs(out, exist_ok=True)
    def need(name):
        return not os.path.exists(os.path.join(out, name))
    if need("png16-rgba-7000.png"): png(os.path.join(out, "png16-rgba-7000.png"), 7000, 7000, 16)
    if need("png8-rgba-7000.png"): png(os.path.join(out, "png8-rgba-7000.png"), 7000, 7000, 8)
    if need("cmyk-prog-7000.jpg"):
        gradient("CMYK", 7000, 7000).save(os.path.join(out, "cmyk-prog-7000.jpg"), quality=75, progressive=True)
    if need("scanbomb.jpg"): many_scans(os.path.join(out, "scanbomb.jpg"), 7000, 7000, 11, total=480)
    if need("heavy64.jpg"): many_scans(os.path.join(out, "heavy64.jpg"), 4000, 4000, 7)
    if need("ordinary.jpg"): gradient("RGB", 1600, 1200).save(os.path.join(out, "ordinary.jpg"), quality=85)
    for name in sorted(os.listdir(out)):
        print(f"{name}: {os.path.getsize(os.path.join(out, name))} bytes")

main()
