#!/usr/bin/env python3
"""The Pillow peer: draft() + thumbnail() to an exact width, JPEG quality 82, one thread.

draft() makes libjpeg decode at the smallest DCT scale that still covers the requested
size (as imagecached does with TurboJPEG); thumbnail() then resamples (bicubic, with
reducing_gap) to the box. The box follows each image's aspect ratio so the width is exact.

usage: pillow_thumbnails.py [--decode-only] WIDTH OUTDIR FILE...   (prints one JSON line)
--decode-only stops after the draft decode (the library's share of the work).
"""
import json
import math
import os
import resource
import sys
import time

from PIL import Image


def main():
    args = sys.argv[1:]
    decode_only = args[0] == "--decode-only"
    if decode_only:
        args = args[1:]
    width, out, files = int(args[0]), args[1], args[2:]
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    for path in files:
        with Image.open(path) as im:
            box = (width, max(1, math.ceil(im.height * width / im.width)))
            im.draft("RGB", box)
            if decode_only:
                im.load()
                continue
            im.thumbnail(box)
            name = os.path.splitext(os.path.basename(path))[0]
            im.save(os.path.join(out, name + ".jpg"), quality=82)
    seconds = time.perf_counter() - start
    print(json.dumps({"tool": "pillow-draft" + ("-decode" if decode_only else ""), "images": len(files), "seconds": round(seconds, 4),
                      "imagesPerSecond": round(len(files) / seconds, 1),
                      "peakRSSKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main()
