#!/usr/bin/env python3
"""Quality of thumbnails: mean SSIM against a reference made from a full decode.

The reference for each source is Pillow's full-size decode (converted to sRGB by ImageCms
when the source embeds an ICC profile), shrunk to the thumbnail's exact size with Lanczos and
no draft, i.e. the best the source allows. SSIM is the usual
one (Wang et al. 2004: 11×11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03) on the luma
(ITU-R 601) of each image, averaged over the images.

usage: thumbnail_ssim.py SOURCE_DIR TOOL=THUMB_DIR...   (prints one JSON line per tool)
"""
import io
import json
import os
import sys

import numpy as np
from PIL import Image, ImageCms


def gaussian_kernel(size=11, sigma=1.5):
    x = np.arange(size) - (size - 1) / 2
    k = np.exp(-(x ** 2) / (2 * sigma ** 2))
    return k / k.sum()


def filter2(image, kernel):
    # Separable 'valid' convolution.
    rows = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="valid"), 1, image)
    return np.apply_along_axis(lambda c: np.convolve(c, kernel, mode="valid"), 0, rows)


def ssim(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    k = gaussian_kernel()
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mu_a, mu_b = filter2(a, k), filter2(b, k)
    sa = filter2(a * a, k) - mu_a ** 2
    sb = filter2(b * b, k) - mu_b ** 2
    sab = filter2(a * b, k) - mu_a * mu_b
    num = (2 * mu_a * mu_b + c1) * (2 * sab + c2)
    den = (mu_a ** 2 + mu_b ** 2 + c1) * (sa + sb + c2)
    return float((num / den).mean())


def luma(im):
    return np.asarray(im.convert("RGB").convert("L"))


def main():
    sources = sys.argv[1]
    tools = [arg.split("=", 1) for arg in sys.argv[2:]]
    references = {}
    for tool, folder in tools:
        scores = []
        for name in sorted(os.listdir(folder)):
            stem = os.path.splitext(name)[0]
            with Image.open(os.path.join(folder, name)) as thumb:
                size = thumb.size
                candidate = luma(thumb)
            key = (stem, size)
            if key not in references:
                source = next(os.path.join(sources, stem + ext) for ext in (".jpg", ".png", ".webp", ".avif", ".gif")
                              if os.path.exists(os.path.join(sources, stem + ext)))
                with Image.open(source) as full:
                    rgb = full.convert("RGB")
                    if full.info.get("icc_profile"):
                        # A profiled source: the reference is its colours in sRGB (ImageCms).
                        profile = ImageCms.ImageCmsProfile(io.BytesIO(full.info["icc_profile"]))
                        rgb = ImageCms.profileToProfile(rgb, profile, ImageCms.createProfile("sRGB"), outputMode="RGB")
                    references[key] = luma(rgb.resize(size, Image.LANCZOS))
            scores.append(ssim(references[key], candidate))
        print(json.dumps({"tool": tool, "images": len(scores), "ssim": round(float(np.mean(scores)), 5),
                          "ssimMin": round(float(np.min(scores)), 5),
                          "perImage": {name: round(score, 5) for name, score in zip(sorted(os.listdir(folder)), scores)}}))


if __name__ == "__main__":
    main()
