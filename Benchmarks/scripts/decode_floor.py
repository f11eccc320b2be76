#!/usr/bin/env python3
"""The JPEG decode floor for downloads: how fast libjpeg-turbo, through Pillow,
decodes the download benchmark's photos at its cheapest full decode (DCT scaling to 1/8,
as the daemon's verification does), on one core.

    Benchmarks/.build/release/imagecache-bench download --prepare /tmp/dl
    Benchmarks/scripts/decode_floor.py /tmp/dl
"""
import glob
import io
import os
import sys
import time

from PIL import Image, features

folder = sys.argv[1] if len(sys.argv) > 1 else "."
paths = sorted(glob.glob(os.path.join(folder, "*.jpg")))
if not paths:
    sys.exit(f"no .jpg files in {folder}")
bodies = [open(path, "rb").read() for path in paths]
print(f"Pillow {Image.__version__}, libjpeg-turbo {features.version('libjpeg_turbo')}; "
      f"{len(bodies)} photos, {sum(map(len, bodies)) / 1e6:.1f} MB")
start = time.perf_counter()
for body in bodies:
    image = Image.open(io.BytesIO(body))
    image.draft("RGB", (image.width // 8, image.height // 8))
    image.load()
elapsed = time.perf_counter() - start
print(f"draft 1/8: {elapsed * 1000 / len(bodies):.1f} ms per photo, "
      f"{sum(map(len, bodies)) / elapsed / 1e6:.0f} MB/s on one core")
