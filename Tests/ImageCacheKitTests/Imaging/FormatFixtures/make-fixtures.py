#!/usr/bin/env python3
"""Makes the WebP, AVIF and GIF fixtures of FormatDecodingTests with Pillow.

Every picture is the same 96x64 scene, so the tests can check colours after a decode: the left
half red (220, 30, 30), the right half blue (30, 60, 220), a green (40, 180, 60) bar across the
bottom 16 rows. Transparent variants make the top-left 32x32 square fully transparent.
Run: python3 make-fixtures.py (Pillow >= 11.3 writes AVIF; 13.0.0 made these).
"""
from PIL import Image

W, H = 96, 64


def scene(alpha=False):
    im = Image.new("RGBA" if alpha else "RGB", (W, H))
    px = im.load()
    for y in range(H):
        for x in range(W):
            c = (220, 30, 30) if x < W // 2 else (30, 60, 220)
            if y >= H - 16:
                c = (40, 180, 60)
            if alpha:
                c = c + ((0,) if x < 32 and y < 32 else (255,))
            px[x, y] = c
    return im


scene().save("lossy.webp", quality=90)
scene().save("lossless.webp", lossless=True)
scene(alpha=True).save("alpha-lossless.webp", lossless=True)
scene(alpha=True).save("alpha-lossy.webp", quality=90)
first, second = scene(), Image.new("RGB", (W, H), (250, 250, 250))
first.save("animated.webp", save_all=True, append_images=[second], duration=100, loop=0, quality=90)

scene().save("rgb.avif", quality=90)
scene(alpha=True).save("alpha.avif", quality=90)
# EXIF orientation 6 (turn 90° clockwise to show): Pillow writes it as irot/imir.
exif = Image.Exif()
exif[0x0112] = 6
scene().save("rotated.avif", quality=90, exif=exif.tobytes())

palette = scene().convert("P", palette=Image.ADAPTIVE, colors=8)
palette.save("plain.gif", interlace=False)
palette.save("interlaced.gif", interlace=True)
# Transparency: the palette index of the transparent square.
rgba = scene(alpha=True)
p = rgba.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=7)
p.paste(7, (0, 0, 32, 32))
p.save("transparent.gif", transparency=7, interlace=False)
frames = [palette, Image.new("RGB", (W, H), (250, 250, 250)).convert("P")]
frames[0].save("animated.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
