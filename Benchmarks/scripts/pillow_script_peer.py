#!/usr/bin/env python3
"""The script a user would write instead of the daemon: each file drafted to the thumbnail's
box (libjpeg's DCT scaling: the smallest scale that still covers it, 1/8 for 2400 px → 256),
then thumbnail() with Lanczos, saved at JPEG quality 80. With --margin, no draft of its own:
thumbnail() drafts at twice the box (its reducing_gap), as libvips and the daemon keep a
margin. usage: [--margin] WIDTH OUTDIR FILE..."""
import math, os, sys
from PIL import Image

margin = sys.argv[1] == "--margin"
width, out = int(sys.argv[1 + margin]), sys.argv[2 + margin]
for path in sys.argv[3 + margin:]:
    with Image.open(path) as im:
        box = (width, max(1, math.ceil(im.height * width / im.width)))
        if not margin:
            im.draft("RGB", box)
        im.thumbnail(box, Image.LANCZOS)
        im.convert("RGB").save(os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".jpg"), quality=80)
