#!/usr/bin/env python3
"""Makes the colour-management fixtures and their reference conversions.

Run once from the repository root; the outputs are committed beside this script:

    python3 Tests/Fixtures/colour/make_fixtures.py

Needs Pillow with ImageCms (pip's wheel bundles LittleCMS) and the system liblcms2 (Debian
liblcms2-2), through ctypes, only to write the two RGB profiles, which Pillow cannot build:
Display P3 (P3 primaries, D65 white, sRGB's transfer curve, as Apple's profile) and Adobe RGB
(1998) (its primaries, D65, gamma 563/256). Every conversion is Pillow's ImageCms
(LittleCMS), perceptual intent (its default, and the daemon's), to ImageCms' built-in sRGB.

The picture: Pillow's hopper.jpg from the corpus (a photo, 128 × 128) beside a 64-px band of
saturated hues and greys, so out-of-sRGB-gamut-looking colours and neutrals are both covered.
"""
import ctypes
import io
import os
import struct
import zlib

from PIL import Image, ImageCms, PngImagePlugin

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "corpus")

lcms = ctypes.CDLL("liblcms2.so.2")


class XYY(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]


class XYYTriple(ctypes.Structure):
    _fields_ = [("Red", XYY), ("Green", XYY), ("Blue", XYY)]


lcms.cmsBuildParametricToneCurve.restype = ctypes.c_void_p
lcms.cmsBuildParametricToneCurve.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
lcms.cmsBuildGamma.restype = ctypes.c_void_p
lcms.cmsBuildGamma.argtypes = [ctypes.c_void_p, ctypes.c_double]
lcms.cmsCreateRGBProfile.restype = ctypes.c_void_p
lcms.cmsCreateRGBProfile.argtypes = [ctypes.POINTER(XYY), ctypes.POINTER(XYYTriple), ctypes.c_void_p * 3]
lcms.cmsSaveProfileToMem.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]
lcms.cmsMLUalloc.restype = ctypes.c_void_p
lcms.cmsMLUalloc.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
lcms.cmsMLUsetASCII.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lcms.cmsWriteTag.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p]
lcms.cmsCloseProfile.argtypes = [ctypes.c_void_p]
DESC_TAG = 0x64657363  # 'desc'

D65 = (0.3127, 0.3290)
P3 = ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060))
ADOBE = ((0.640, 0.330), (0.210, 0.710), (0.150, 0.060))
ADOBE_GAMMA = 563 / 256


def rgb_profile(name, primaries, curve):
    white = XYY(D65[0], D65[1], 1.0)
    triple = XYYTriple(*(XYY(x, y, 1.0) for x, y in primaries))
    handle = lcms.cmsCreateRGBProfile(ctypes.byref(white), ctypes.byref(triple), (ctypes.c_void_p * 3)(curve, curve, curve))
    mlu = lcms.cmsMLUalloc(None, 1)
    lcms.cmsMLUsetASCII(mlu, b"en", b"US", name.encode())
    lcms.cmsWriteTag(handle, DESC_TAG, mlu)
    size = ctypes.c_uint32(0)
    lcms.cmsSaveProfileToMem(handle, None, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    lcms.cmsSaveProfileToMem(handle, buffer, ctypes.byref(size))
    lcms.cmsCloseProfile(handle)
    return buffer.raw[: size.value]


def srgb_curve():
    params = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
    return lcms.cmsBuildParametricToneCurve(None, 4, params)


def source_picture():
    hopper = Image.open(os.path.join(CORPUS, "jpeg/pillow/hopper.jpg")).convert("RGB")
    picture = Image.new("RGB", (192, 128))
    picture.paste(hopper, (0, 0))
    band = Image.new("HSV", (64, 128))
    pixels = band.load()
    for y in range(128):
        for x in range(64):
            # Top: full-saturation hues; bottom quarter: a grey ramp.
            pixels[x, y] = (y * 2, 255, 255 - x) if y < 96 else (0, 0, x * 4)
    picture.paste(band.convert("RGB"), (128, 0))
    return picture


def converted(image, profile_bytes):
    source = ImageCms.ImageCmsProfile(io.BytesIO(profile_bytes))
    return ImageCms.profileToProfile(image, source, ImageCms.createProfile("sRGB"), outputMode="RGB")


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def main():
    srgb = ImageCms.createProfile("sRGB")
    picture = source_picture()
    p3 = rgb_profile("Display P3 (imagecached fixture)", P3, srgb_curve())
    adobe = rgb_profile("Adobe RGB (1998) (imagecached fixture)", ADOBE, lcms.cmsBuildGamma(None, ADOBE_GAMMA))
    for name, data in (("display-p3.icc", p3), ("adobe-rgb-1998.icc", adobe)):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)

    def to_space(profile_bytes):
        target = ImageCms.ImageCmsProfile(io.BytesIO(profile_bytes))
        return ImageCms.profileToProfile(picture, srgb, target, outputMode="RGB")

    # Display P3 JPEG (quality 95, 4:4:4) and the reference: its decoded pixels converted to sRGB.
    p3_picture = to_space(p3)
    p3_picture.save(os.path.join(HERE, "display-p3.jpg"), quality=95, subsampling=0, icc_profile=p3)
    with Image.open(os.path.join(HERE, "display-p3.jpg")) as stored:
        converted(stored.convert("RGB"), p3).save(os.path.join(HERE, "display-p3.expected.png"))

    # Adobe RGB PNG with iCCP, and the reference.
    adobe_picture = to_space(adobe)
    adobe_picture.save(os.path.join(HERE, "adobe-rgb.png"), icc_profile=adobe)
    converted(adobe_picture, adobe).save(os.path.join(HERE, "adobe-rgb.expected.png"))

    # The same Adobe RGB pixels declared by cHRM (D65, Adobe primaries) and gAMA only, no iCCP;
    # the reference converts through a profile made of exactly those values.
    gama = round(100000 / ADOBE_GAMMA)
    chrm = struct.pack(">8I", *(round(v * 100000) for v in (D65 + ADOBE[0] + ADOBE[1] + ADOBE[2])))
    plain = io.BytesIO()
    adobe_picture.save(plain, format="PNG")
    body = plain.getvalue()
    ihdr_end = 8 + 8 + 13 + 4
    tagged = body[:ihdr_end] + png_chunk(b"gAMA", struct.pack(">I", gama)) + png_chunk(b"cHRM", chrm) + body[ihdr_end:]
    with open(os.path.join(HERE, "chrm-gama.png"), "wb") as f:
        f.write(tagged)
    declared = rgb_profile("cHRM + gAMA", ADOBE, lcms.cmsBuildGamma(None, 100000 / gama))
    converted(adobe_picture, declared).save(os.path.join(HERE, "chrm-gama.expected.png"))

    # A broken profile: the P3 profile cut to 200 bytes (its header still claims the whole
    # size), embedded in the sRGB picture. Expected: taken as sRGB, i.e. the pixels as stored.
    picture.save(os.path.join(HERE, "broken-profile.jpg"), quality=95, subsampling=0, icc_profile=p3[:200])
    with Image.open(os.path.join(HERE, "broken-profile.jpg")) as stored:
        stored.convert("RGB").save(os.path.join(HERE, "broken-profile.expected.png"))

    # The corpus' YCCK (Adobe, inverted) JPEG with its 557 KB print profile, converted by Pillow.
    with Image.open(os.path.join(CORPUS, "jpeg/jpeg-decoder/reftest/ycck.jpg")) as cmyk:
        converted(cmyk, cmyk.info["icc_profile"]).save(os.path.join(HERE, "ycck.expected.png"))
    print("fixtures written to", HERE)


if __name__ == "__main__":
    main()
