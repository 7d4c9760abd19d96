"""Rows for src/ops/image_decoder.cc: RGB images encoded here with Pillow in
every format the spec lists, at sizes that are not multiples of the codecs'
blocks. The reference evaluator returns Pillow's array as it is, which
breaks the spec's [H, W, 3] for grayscale, alpha, palette and 1-bit
sources and raises on streams that do not decode: test_image_decoder.py
checks those against the spec."""
import io

import numpy as np
from PIL import Image

from op_harness import Case, ErrorCase, T, V

_rng = np.random.default_rng(7)
# 5x5 tiles of random colours, cut to 23x17.
RGB = np.repeat(np.repeat(_rng.integers(0, 256, (5, 4, 3), np.uint8), 5, 0), 5, 1)[:23, :17]


def encoded(img, fmt, **save):
    """The bytes of a PIL image saved as `fmt`, as a uint8 row input."""
    with io.BytesIO() as f:
        img.save(f, format=fmt, **save)
        return V(np.frombuffer(f.getvalue(), np.uint8).copy(), np.uint8)


_IMAGES = {
    "jpeg": ("JPEG", {}),
    "jpeg-444-q95": ("JPEG", {"quality": 95, "subsampling": 0}),
    "jpeg-progressive": ("JPEG", {"progressive": True}),
    "png": ("PNG", {}),
    "bmp": ("BMP", {}),
    "tiff": ("TIFF", {}),
    "tiff-lzw": ("TIFF", {"compression": "tiff_lzw"}),
    "webp": ("WEBP", {}),
    "webp-lossless": ("WEBP", {"lossless": True}),
    "jpeg2000": ("JPEG2000", {}),
    "jpeg2000-codestream": ("JPEG2000", {"no_jp2": True}),
    "ppm": ("PPM", {}),
}
CASES = [Case("ImageDecoder", [encoded(Image.fromarray(RGB), fmt, **save)],
              {"pixel_format": pixels}, id=f"{name}-{pixels}")
         for name, (fmt, save) in _IMAGES.items() for pixels in ("RGB", "BGR", "Grayscale")
         if pixels == "RGB" or name in ("jpeg", "png", "webp")]

ERROR_CASES = [
    ErrorCase("ImageDecoder", [T((2, 3))], dtype="uint8", match="encoded_stream must be 1-D"),
    ErrorCase("ImageDecoder", [T((3,))], {"pixel_format": "RGBA"}, dtype="uint8",
              match="pixel_format must be RGB, BGR or Grayscale"),
]
