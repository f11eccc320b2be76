#!/usr/bin/env python3
"""Build the thumbnail benchmark's input: full-size photos 2400 px wide.

Sources are real photos larger than 2400 px (Debian's wallpaper packages: mate-backgrounds,
plasma-workspace-wallpapers). Each is downscaled (never upscaled) to 2400 px wide with a
Lanczos filter and written three times: baseline JPEG and progressive JPEG, quality 90, 4:2:0,
and PNG (8-bit RGB, Pillow's default compression), each kind in its own folder; plus "p3":
the baseline JPEG's picture converted to Display P3 by ImageCms (the profile of
Tests/Fixtures/colour) and saved with that profile embedded, for the cost of colour management;
and "small": the same pictures 1024 px wide, baseline JPEG quality 85 (90 KiB on average, at
most 235 KiB: every one under the daemon's 256 KiB limit for a body kept in memory), for what
bodies waiting in memory cost.

usage: prepare_photos.py OUTDIR [SOURCE_DIR ...]
"""
import io
import os
import re
import sys

from PIL import Image, ImageCms

P3_PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Tests/Fixtures/colour/display-p3.icc")

WIDTH = 2400
SMALL_WIDTH = 1024
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
    for kind in ("baseline", "progressive", "png", "p3", "small"):
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
        small.save(os.path.join(out, "png", name + ".png"))
        with open(P3_PROFILE, "rb") as f:
            p3 = f.read()
        in_p3 = ImageCms.profileToProfile(small, ImageCms.createProfile("sRGB"), ImageCms.ImageCmsProfile(io.BytesIO(p3)),
                                          outputMode="RGB")
        in_p3.save(os.path.join(out, "p3", name + ".jpg"), quality=90, subsampling=2, icc_profile=p3)
        smaller = small.resize((SMALL_WIDTH, round(height * SMALL_WIDTH / WIDTH)), Image.LANCZOS)
        smaller.save(os.path.join(out, "small", name + ".jpg"), quality=85, subsampling=2)
        made += 1
    print(f"{made} photos at {WIDTH} px in {out}/{{baseline,progressive,png,p3}}, at {SMALL_WIDTH} px in {out}/small")


if __name__ == "__main__":
    main()
