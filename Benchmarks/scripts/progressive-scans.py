#!/usr/bin/python3
"""What a progressive JPEG's trailing scans cost and carry, off the daemon: the figures behind
the scans a thumbnail leaves out (docs/benchmarks.md, "Progressive thumbnails read the scans
they use").

1. On the progressive photos (prepare_photos.py's): each file whole, then cut before its 8th
   and its 7th scan with an EOI appended; the bytes kept, `djpeg -scale 1/4` CPU per photo
   (3 passes, a process per file), and the mean (lowest) SSIM of a 256-px thumbnail made
   by Pillow's 1/4 draft + Lanczos, against the full decode (thumbnail_ssim.py's method).
2. The baseline photos re-encoded progressive (libjpeg's default script) at several
   qualities: the SSIM lost by leaving out the scans after the 7th (the three refinements of
   the AC coefficients' last bit), at 256 px from a 1/4 decode and 512 px from a 1/2 one.

usage: Benchmarks/scripts/progressive-scans.py [PHOTOS]   (default /tmp/imagecached-thumbnail-bench/photos)
"""
import glob
import io
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import thumbnail_ssim as T  # noqa: E402


def scan_offsets(data):
    """Offsets of the SOS markers, walking segments and stepping over entropy-coded data."""
    out, i = [], 2
    while i < len(data) - 4:
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xDA:
            out.append(i)
            j = i + 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
            while j < len(data) - 1 and not (data[j] == 0xFF and data[j + 1] != 0 and not 0xD0 <= data[j + 1] <= 0xD7):
                j += 1
            i = j
        elif marker == 0xD9:
            break
        elif marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
        else:
            i += 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
    return out


def cut(data, keep):
    scans = scan_offsets(data)
    return data if keep >= len(scans) else data[:scans[keep]] + b"\xff\xd9"


def thumbnail(data, width, draft):
    image = Image.open(io.BytesIO(data))
    image.draft("RGB", (image.width // draft, image.height // draft))
    image = image.convert("RGB")
    return image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)


def reference(path, size):
    return T.luma(Image.open(path).convert("RGB").resize(size, Image.LANCZOS))


def main():
    photos = sys.argv[1] if len(sys.argv) > 1 else "/tmp/imagecached-thumbnail-bench/photos"
    progressive = sorted(glob.glob(os.path.join(photos, "progressive", "*.jpg")))
    baseline = sorted(glob.glob(os.path.join(photos, "baseline", "*.jpg")))
    if not progressive or not baseline:
        sys.exit(f"no photos under {photos} (Benchmarks/scripts/prepare_photos.py makes them)")
    references = {}
    print("| scans decoded | bytes of the file | djpeg at 1/4, ms a photo | mean SSIM at 256 px (lowest) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for keep in (10, 7, 6):
            kept, scores, files = [], [], []
            for path in progressive:
                data = open(path, "rb").read()
                short = cut(data, keep)
                kept.append(len(short) / len(data))
                file = os.path.join(folder, f"{keep}-{os.path.basename(path)}")
                open(file, "wb").write(short)
                files.append(file)
                thumb = thumbnail(short, 256, 4)
                key = (path, thumb.size)
                references.setdefault(key, reference(path, thumb.size))
                scores.append(T.ssim(references[key], T.luma(thumb)))
            before = os.times()
            for _ in range(3):
                for file in files:
                    subprocess.run(["djpeg", "-scale", "1/4", "-outfile", "/dev/null", file], check=True)
            after = os.times()
            cpu = (after.children_user + after.children_system - before.children_user - before.children_system) / (3 * len(files))
            label = "all" if keep == 10 else f"the first {keep}"
            print(f"| {label} | {np.mean(kept):.3f} | {cpu * 1000:.1f} | {np.mean(scores):.5f} ({min(scores):.5f}) |")
    print()
    print("| quality | SSIM lost at 256 px (1/4), mean (worst photo) | at 512 px (1/2) |")
    print("|---|---|---|")
    for quality in (50, 65, 75, 85, 95):
        cells = []
        for width, draft in ((256, 4), (512, 2)):
            losses = []
            for path in baseline:
                buffer = io.BytesIO()
                Image.open(path).save(buffer, "JPEG", quality=quality, progressive=True)
                data = buffer.getvalue()
                whole, short = thumbnail(data, width, draft), thumbnail(cut(data, 7), width, draft)
                key = (path, whole.size)
                references.setdefault(key, reference(path, whole.size))
                losses.append(T.ssim(references[key], T.luma(whole)) - T.ssim(references[key], T.luma(short)))
            cells.append(f"{np.mean(losses):.5f} ({max(losses):.5f})")
        print(f"| {quality} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
