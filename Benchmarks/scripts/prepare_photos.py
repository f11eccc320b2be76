#!/usr/bin/env python3
"""Build the thumbnail benchmark's input: full-size photos 2400 px wide.

Sources are real photos larger than 2400 px (Debian's wallpaper packages: mate-backgrounds,
plasma-workspace-wallpapers). Each is downscaled (never upscaled) to 2400 px wide with a
Lanczos filter and written twice: baseline JPEG and progressive JPEG, quality 90, 4:2:0.

usage: prepare_photos.py OUTDIR [SOURCE_DIR ...]
"""
import os
import re
import sys

from PIL import Image

WIDTH = 2400
# The wallpapers that are photographs (the others are renders and paintings, which compress
# and scale differently from what a photo search returns). Checked by eye on a contact sheet.
PHOTOS = {
    "Aqua", "Garden", "LadyBird", "TwoWings", "Wood", "YellowFlower",                # mate-backgrounds
    "BytheWater", "ColdRipple", "ColorfulCups", "DarkestHour", "EveningGlow",          # plasma-workspace-
    "FallenLeaf", "Grey", "Kite", "OneStandsOut", "Path", "summer_1am",               #   wallpapers
}
DEFAULT_SOURCES = ["/usr/share/backgrounds/mate", "/usr/share/wallpapers"]


def candidates(roots):
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if name.lower().endswith((".jpg", ".jpeg", ".png")):
                    yield os.path.join(folder, name)


def main():
    out = sys.argv[1]
    roots = sys.argv[2:] or DEFAULT_SOURCES
    for kind in ("baseline", "progressive"):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
    # One file per picture: the largest of the sizes a wallpaper ships (plasma links the small
    # sizes to the large one; mate ships some pictures at two sizes).
    best = {}
    for path in sorted(candidates(roots)):
        try:
            with Image.open(path) as im:
                size = im.size
        except OSError:
            continue
        real = os.path.realpath(path)
        if "/images_dark/" in real:
            continue  # a dark variant of the same artwork
        picture = os.path.dirname(real) if "/contents/images" in real else re.sub(r"_\d+x\d+$", "", os.path.splitext(real)[0])
        if picture not in best or size[0] > best[picture][1][0]:
            best[picture] = (real, size)
    made = 0
    for picture, (path, size) in sorted(best.items()):
        label = os.path.basename(picture.replace("/contents/images", ""))
        if label not in PHOTOS or size[0] <= WIDTH or size[0] < size[1]:
            continue  # never upscale; landscape only, as most search results are
        try:
            with Image.open(path) as im:
                height = round(im.height * WIDTH / im.width)
                small = im.convert("RGB").resize((WIDTH, height), Image.LANCZOS)
        except OSError:
            continue
        name = label
        small.save(os.path.join(out, "baseline", name + ".jpg"), quality=90, subsampling=2)
        small.save(os.path.join(out, "progressive", name + ".jpg"), quality=90, subsampling=2, progressive=True)
        made += 1
    print(f"{made} photos at {WIDTH} px in {out}/{{baseline,progressive}}")


if __name__ == "__main__":
    main()
