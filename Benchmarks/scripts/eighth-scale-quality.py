#!/usr/bin/python3
"""Whether a baseline JPEG thumbnail could be decoded at 1/8 instead of the 1/4 the daemon and
libvips keep (docs/benchmarks.md, "The luma's last bit at 1/2"): 256-px thumbnails of the
baseline photos (prepare_photos.py's) made by Pillow from its 1/8 and 1/4 drafts, each resized
with Lanczos from the box its blocks really cover (a 1 500-row photo is 187.5 rows at 1/8,
which libjpeg rounds up to 188), the 1/8 one also after a light sharpening (3 taps, -a, 1+2a,
-a, each way) for the detail its block averages lose; JPEG quality 80. Scored with
thumbnail_ssim.py beside vipsthumbnail's, one JSON line per tool, then each tool's mean and
its largest shortfall below vips on one photo.

usage: Benchmarks/scripts/eighth-scale-quality.py [PHOTOS]   (default /tmp/imagecached-thumbnail-bench/photos)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

WIDTH = 256
SHARPEN = (0.05, 0.1)


def sharpened(image, a):
    pixels = np.asarray(image).astype(np.float64)
    for axis in (0, 1):
        before = np.take(pixels, [0], axis=axis)
        after = np.take(pixels, [-1], axis=axis)
        padded = np.concatenate([before, pixels, after], axis=axis)
        n = pixels.shape[axis]
        pixels = (1 + 2 * a) * np.take(padded, range(1, n + 1), axis=axis) \
            - a * (np.take(padded, range(0, n), axis=axis) + np.take(padded, range(2, n + 2), axis=axis))
    return Image.fromarray(np.clip(np.round(pixels), 0, 255).astype(np.uint8))


def main():
    photos = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/imagecached-thumbnail-bench/photos", "baseline")
    files = sorted(glob.glob(os.path.join(photos, "*.jpg")))
    if not files:
        sys.exit(f"no photos under {photos} (Benchmarks/scripts/prepare_photos.py makes them)")
    with tempfile.TemporaryDirectory() as out:
        tools = ["eighth", "quarter"] + [f"eighth-sharpened-{a}" for a in SHARPEN]
        for tool in tools + ["vips"]:
            os.mkdir(os.path.join(out, tool))
        for path in files:
            stem = os.path.splitext(os.path.basename(path))[0]
            for tool, scale in (("eighth", 8), ("quarter", 4)):
                image = Image.open(path)
                width, height = image.size
                image.draft("RGB", (width // scale, height // scale))
                image = image.convert("RGB")
                size = (WIDTH, round(height * WIDTH / width))
                box = (0, 0, width / scale, height / scale)
                image.resize(size, Image.LANCZOS, box=box).save(os.path.join(out, tool, stem + ".jpg"), quality=80)
                if scale == 8:
                    for a in SHARPEN:
                        bands = [sharpened(band, a) for band in image.split()]
                        Image.merge("RGB", bands).resize(size, Image.LANCZOS, box=box).save(
                            os.path.join(out, f"eighth-sharpened-{a}", stem + ".jpg"), quality=80)
        subprocess.run(["vipsthumbnail", "--size", f"{WIDTH}x", "-o", os.path.join(out, "vips", "%s.jpg[Q=80]")] + files,
                       check=True, env=dict(os.environ, VIPS_CONCURRENCY="1"))
        here = os.path.dirname(os.path.abspath(__file__))
        scored = subprocess.run([sys.executable, os.path.join(here, "thumbnail_ssim.py"), photos]
                                + [f"{tool}={os.path.join(out, tool)}" for tool in ["vips"] + tools],
                                check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in scored.splitlines()]
    vips = rows[0]["perImage"]
    for row in rows:
        print(json.dumps({k: row[k] for k in ("tool", "images", "ssim", "ssimMin")}))
    for row in rows[1:]:
        worst = min(row["perImage"][name] - vips[name] for name in vips)
        print(f"{row['tool']}: mean − vips' {row['ssim'] - rows[0]['ssim']:+.5f}, largest shortfall on one photo {worst:+.5f}")


if __name__ == "__main__":
    main()
