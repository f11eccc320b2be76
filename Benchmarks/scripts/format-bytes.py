#!/usr/bin/env python3
"""Bytes of a thumbnail-sized photo as JPEG, WebP and AVIF at the same q (the
figures behind `image_format = auto`), on the thumbnail benchmark's real photos (the wallpaper
photographs prepare_photos.py lists), with Pillow's encoders (libjpeg-turbo, libwebp, libavif
with libaom: AVIF's q mapped to AV1's quantizer as libavif maps it).

Each photo is resized (Lanczos) to WIDTH px and encoded at q=80 (what the daemon sends imgix)
in each format; prints the mean bytes per format and the ratio to JPEG. imgix's own encoders
and q mappings are not these; this says what the same q buys with the reference libraries.

usage: format-bytes.py [WIDTH ...]        (default 256 512)
"""
import io
import os
import sys

from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
from prepare_photos import DEFAULT_SOURCES, PHOTOS  # noqa: E402


def sources():
    found = {}
    for root in DEFAULT_SOURCES:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                path = os.path.join(folder, name)
                for photo in PHOTOS:
                    if photo in path and photo not in found and name.lower().endswith((".jpg", ".jpeg", ".png")):
                        found[photo] = path
    return [found[k] for k in sorted(found)]


def main():
    widths = [int(w) for w in sys.argv[1:]] or [256, 512]
    photos = sources()
    print(f"{len(photos)} photos, q=80")
    print(f"{'width':>5} {'jpg B':>8} {'webp B':>8} {'avif B':>8} {'webp/jpg':>9} {'avif/jpg':>9}")
    for width in widths:
        total = {"JPEG": 0, "WEBP": 0, "AVIF": 0}
        for path in photos:
            with Image.open(path) as im:
                rgb = im.convert("RGB")
                small = rgb.resize((width, round(rgb.height * width / rgb.width)), Image.LANCZOS)
            for fmt in total:
                out = io.BytesIO()
                small.save(out, format=fmt, quality=80)
                total[fmt] += len(out.getvalue())
        n = len(photos)
        jpg, webp, avif = (total[k] / n for k in ("JPEG", "WEBP", "AVIF"))
        print(f"{width:5d} {jpg:8.0f} {webp:8.0f} {avif:8.0f} {webp / jpg:9.2f} {avif / jpg:9.2f}")


if __name__ == "__main__":
    main()
