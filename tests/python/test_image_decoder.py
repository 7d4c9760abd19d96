"""ImageDecoder on sources the reference evaluator gets wrong (it returns
Pillow's array as it is): grayscale, alpha, palette, 1-bit and 16-bit
images decode to the spec's [H, W, 3] (or [H, W, 1] for Grayscale), and
streams that do not decode give an empty image. The oracle is Pillow's
convert("RGB") / convert("L"). tests/python/cases/image_decoder.py has the
RGB rows checked against the reference. A build without the codec libraries
(SINGA_IMAGE=OFF) decodes BMP and PNM only: the other formats' tests skip,
and those formats raise an error naming the option."""
import io

import numpy as np
import pytest
from PIL import Image

from cases.image_decoder import RGB, encoded
from op_harness import to_numpy, to_singa
from singa import _singa

CODECS = _singa.build_info()["image_codecs"]
GRAY = RGB[..., 0]
SOURCES = {
    "jpeg-gray": (Image.fromarray(GRAY), "JPEG", {}),
    "png-gray": (Image.fromarray(GRAY), "PNG", {}),
    "png-rgba": (Image.fromarray(RGB).convert("RGBA"), "PNG", {}),
    "png-palette": (Image.fromarray(RGB).convert("P"), "PNG", {}),
    "png-1bit": (Image.fromarray(GRAY).convert("1"), "PNG", {}),
    "bmp-8bit-palette": (Image.fromarray(GRAY), "BMP", {}),
    "bmp-1bit": (Image.fromarray(GRAY).convert("1"), "BMP", {}),
    "tiff-deflate-gray": (Image.fromarray(GRAY), "TIFF", {"compression": "tiff_adobe_deflate"}),
    "webp-rgba": (Image.fromarray(RGB).convert("RGBA"), "WEBP", {"lossless": True}),
    "jpeg2000-gray": (Image.fromarray(GRAY), "JPEG2000", {}),
    "pgm": (Image.fromarray(GRAY), "PPM", {}),
    "pbm": (Image.fromarray(GRAY).convert("1"), "PPM", {}),
}


def _bytes(img, fmt, save):
    return encoded(img, fmt, **save).values.tobytes()


def _skip_without_codecs(fmt):
    """Skips the test when `fmt` needs a codec library this build lacks."""
    if not CODECS and fmt not in ("BMP", "PPM"):
        pytest.skip(f"singa was built without the image codecs (SINGA_IMAGE=OFF): no {fmt}")


def _decode(data, pixel_format):
    x = to_singa(np.frombuffer(data, np.uint8).copy())
    (y,) = _singa.call_op("ImageDecoder", [x], {"pixel_format": pixel_format}, 20)
    return to_numpy(y)


def _expected(data, pixel_format):
    img = Image.open(io.BytesIO(data))
    if pixel_format == "Grayscale":
        return np.asarray(img.convert("L"))[..., None]
    rgb = np.asarray(img.convert("RGB"))
    return rgb[..., ::-1] if pixel_format == "BGR" else rgb


@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
@pytest.mark.parametrize("source", SOURCES)
def test_other_sources_decode_to_the_spec_layout(source, pixel_format):
    _skip_without_codecs(SOURCES[source][1])
    data = _bytes(*SOURCES[source])
    np.testing.assert_array_equal(_decode(data, pixel_format), _expected(data, pixel_format))


def test_netpbm_ascii_and_wide_samples_scale_to_8_bits():
    # maxval 15: 15 -> 255, 7 -> 119 (rounded); 16-bit big-endian samples.
    got = _decode(b"P3\n# two pixels\n2 1\n15\n15 0 7  1 2 3\n", "RGB")
    np.testing.assert_array_equal(got, [[[255, 0, 119], [17, 34, 51]]])
    got = _decode(b"P5 2 1 65535\n\x12\x34\xff\xff", "Grayscale")
    np.testing.assert_array_equal(got, [[[18], [255]]])


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "BMP", "TIFF", "JPEG2000"])
def test_streams_that_do_not_decode_give_an_empty_image(fmt):
    _skip_without_codecs(fmt)
    data = _bytes(Image.fromarray(RGB), fmt, {})
    for bad in (data[: len(data) // 2], data[:8], b"plain text, no image"):
        for pixel_format, channels in (("RGB", 3), ("Grayscale", 1)):
            assert _decode(bad, pixel_format).shape == (0, 0, channels), (fmt, len(bad))


@pytest.mark.skipif(CODECS, reason="singa was built with the image codecs")
@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "TIFF", "JPEG2000"])
def test_a_build_without_codecs_refuses_their_formats(fmt):
    data = _bytes(Image.fromarray(RGB), fmt, {})
    with pytest.raises(NotImplementedError, match=r"built without the image codecs "
                                                  r"\(SINGA_IMAGE=OFF\)"):
        _decode(data, "RGB")
