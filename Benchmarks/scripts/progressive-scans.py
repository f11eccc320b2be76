#!/usr/bin/python3
"""What a progressive JPEG's trailing scans cost and carry, off the daemon: the figures behind
the scans a thumbnail leaves out (docs/benchmarks.md, "Progressive thumbnails read the scans
they use" and "The luma's last bit at 1/2").

1. On the progressive photos (prepare_photos.py's, libjpeg's default script of ten scans):
   each file whole, cut before its 10th scan (the luma's last-bit refinement left out) and
   before its 8th (the chroma's two too), with an EOI appended; the bytes kept, `djpeg
   -scale` CPU per photo at 1/4 and 1/2 (3 passes, a process per file), and the mean (lowest)
   SSIM of 256- and 512-px thumbnails made by Pillow's 1/4 and 1/2 drafts + Lanczos, against
   the full decode (thumbnail_ssim.py's method).
2. The baseline photos re-encoded progressive (the same script) at several qualities: the
   luma table's steps beside libjpeg's at quality 75 (the daemon's line at 1/2), the luma
   SSIM lost by leaving out the luma's last bit at 256 px (1/4) and 512 px (1/2), and at 256
   px what leaving out the chroma's last bit as well costs the colour planes: the SSIM of the
   worse of Cb and Cr, and the mean absolute difference of their levels.

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


# libjpeg's luminance steps at quality 75 (T.81 K.1 halved and rounded): their sum, 1858.
QUALITY_75 = sum(min(255, max(1, (v * 50 + 50) // 100)) for v in (
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99))


def chroma(image):
    _, cb, cr = image.convert("YCbCr").split()
    return np.asarray(cb), np.asarray(cr)


def djpeg_cpu(files, scale):
    before = os.times()
    for _ in range(3):
        for file in files:
            subprocess.run(["djpeg", "-scale", scale, "-outfile", "/dev/null", file], check=True)
    after = os.times()
    return (after.children_user + after.children_system - before.children_user - before.children_system) / (3 * len(files))


def main():
    photos = sys.argv[1] if len(sys.argv) > 1 else "/tmp/imagecached-thumbnail-bench/photos"
    progressive = sorted(glob.glob(os.path.join(photos, "progressive", "*.jpg")))
    baseline = sorted(glob.glob(os.path.join(photos, "baseline", "*.jpg")))
    if not progressive or not baseline:
        sys.exit(f"no photos under {photos} (Benchmarks/scripts/prepare_photos.py makes them)")
    references = {}

    def score(path, thumb):
        key = (path, thumb.size)
        references.setdefault(key, reference(path, thumb.size))
        return T.ssim(references[key], T.luma(thumb))

    print("| scans decoded | bytes of the file | djpeg at 1/4 / 1/2, ms a photo | mean SSIM at 256 px (lowest) | at 512 px |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for keep, label in ((10, "all 10"), (9, "the first 9 (the luma's last bit out)"), (7, "the first 7 (the chroma's too)")):
            kept, files, scores = [], [], {256: [], 512: []}
            for path in progressive:
                data = open(path, "rb").read()
                short = cut(data, keep)
                kept.append(len(short) / len(data))
                file = os.path.join(folder, f"{keep}-{os.path.basename(path)}")
                open(file, "wb").write(short)
                files.append(file)
                for width, draft in ((256, 4), (512, 2)):
                    scores[width].append(score(path, thumbnail(short, width, draft)))
            cells = [f"{np.mean(scores[w]):.5f} ({min(scores[w]):.5f})" for w in (256, 512)]
            print(f"| {label} | {np.mean(kept):.3f} | {djpeg_cpu(files, '1/4') * 1000:.1f} / {djpeg_cpu(files, '1/2') * 1000:.1f} "
                  f"| {cells[0]} | {cells[1]} |")
    print()
    print("| quality | luma steps ÷ quality 75's | luma's last bit out: SSIM lost at 256 px (1/4), mean (worst photo) "
          "| at 512 px (1/2) | the chroma's too, at 256 px: Cb/Cr SSIM lost (worst) | their levels, mean difference (worst) |")
    print("|---|---|---|---|---|---|")
    for quality in (50, 65, 70, 75, 80, 85, 90, 95):
        losses = {256: [], 512: []}
        colour, levels, ratio = [], [], None
        for path in baseline:
            buffer = io.BytesIO()
            Image.open(path).save(buffer, "JPEG", quality=quality, progressive=True)
            data = buffer.getvalue()
            if ratio is None:
                ratio = sum(Image.open(io.BytesIO(data)).quantization[0]) / QUALITY_75
            for width, draft in ((256, 4), (512, 2)):
                whole, short = thumbnail(data, width, draft), thumbnail(cut(data, 9), width, draft)
                losses[width].append(score(path, whole) - score(path, short))
            lumaless, colourless = thumbnail(cut(data, 9), 256, 4), thumbnail(cut(data, 7), 256, 4)
            target = chroma(Image.open(path).convert("RGB").resize(lumaless.size, Image.LANCZOS))
            a, b = chroma(lumaless), chroma(colourless)
            colour.append(max(T.ssim(target[i], a[i]) - T.ssim(target[i], b[i]) for i in (0, 1)))
            levels.append(float(np.mean([np.abs(a[i].astype(float) - b[i].astype(float)).mean() for i in (0, 1)])))
        cells = [f"{np.mean(losses[w]):.5f} ({max(losses[w]):.5f})" for w in (256, 512)]
        print(f"| {quality} | {ratio:.2f} | {cells[0]} | {cells[1]} | {np.mean(colour):.5f} ({max(colour):.5f}) "
              f"| {np.mean(levels):.2f} ({max(levels):.2f}) |")


if __name__ == "__main__":
    main()
