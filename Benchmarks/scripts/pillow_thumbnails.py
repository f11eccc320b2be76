#!/usr/bin/env python3
"""The Pillow peer: thumbnail() to an exact width, JPEG quality 82, one thread.

thumbnail() with its default reducing_gap (2.0) drafts a JPEG itself: libjpeg decodes at the
smallest DCT scale at least twice the box (the margin imagecached keeps), then
reduce() and a Lanczos resample bring it to the box; a PNG is decoded whole and reduced the
same way. The box follows each image's aspect ratio so the width is exact.

usage: pillow_thumbnails.py [--decode-only | --draft-exact] WIDTH OUTDIR FILE...   (one JSON line)
--decode-only stops after thumbnail()'s draft decode (the library's share of the work);
--draft-exact first drafts to the box itself, i.e. the smallest DCT scale that merely covers
it (the method imagecached used before it kept the margin, and this script's peer until then).
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
    draft_exact = args[0] == "--draft-exact"
    if decode_only or draft_exact:
        args = args[1:]
    width, out, files = int(args[0]), args[1], args[2:]
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    for path in files:
        with Image.open(path) as im:
            box = (width, max(1, math.ceil(im.height * width / im.width)))
            if draft_exact:
                im.draft("RGB", box)
            if decode_only:
                im.draft("RGB", (box[0] * 2, box[1] * 2))  # what thumbnail() drafts (reducing_gap 2)
                im.load()
                continue
            im.thumbnail(box)
            name = os.path.splitext(os.path.basename(path))[0]
            im.save(os.path.join(out, name + ".jpg"), quality=82)
    seconds = time.perf_counter() - start
    print(json.dumps({"tool": "pillow-thumbnail" + ("-decode" if decode_only else "-draft-exact" if draft_exact else ""), "images": len(files), "seconds": round(seconds, 4),
                      "imagesPerSecond": round(len(files) / seconds, 1),
                      "peakRSSKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main()
