// ImageDecoder: decodes an encoded image (uint8 [N]) into uint8 [H, W, C]:
// C = 3 for pixel_format RGB (the default) and BGR, 1 for Grayscale. BMP,
// JPEG, JPEG 2000, TIFF, PNG, WebP and PNM (P1-P6) are told apart by their
// first bytes; a stream that is none of them or does not decode gives an
// empty [0, 0, C] tensor, as the spec says.
// https://onnx.ai/onnx/operators/onnx__ImageDecoder.html
//
// As onnx's reference (Pillow): an alpha channel is dropped, 16-bit samples
// keep their high byte, a grayscale image is replicated into RGB, and
// Grayscale from colour is L = (19595 R + 38470 G + 7471 B + 2^15) >> 16.
// JPEG decodes with libjpeg's defaults (islow DCT, "fancy" chroma
// upsampling, as the spec requires), WebP with libwebp's.
//
// The output's shape depends on the values, and whether the stream decodes
// is only known once all of it has (a truncated JPEG has a good header):
// shape inference decodes the image, and the kernel decodes it again.
//
// A build without the codec libraries (SINGA_IMAGE=OFF) decodes BMP and PNM
// only; a stream in one of the other formats raises UnsupportedOp.
#if SINGA_IMAGE
// clang-format off
#include <cstdio>  // jpeglib.h uses FILE and size_t without including a header for them
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <openjpeg.h>
#include <png.h>
#include <tiffio.h>
#include <webp/decode.h>
#endif

#include <csetjmp>
#include <cstring>
#include <optional>

#include "ops/common.h"

namespace singa {
namespace {

struct DecoderAttrs {
  std::string pixel_format = "RGB";
};

// 8-bit pixels, row-major, 1 (gray) or 3 (RGB) channels.
struct Image {
  int64_t height = 0, width = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;
};

using Bytes = std::span<const uint8_t>;

bool StartsWith(Bytes b, std::string_view magic) {
  return b.size() >= magic.size() && std::memcmp(b.data(), magic.data(), magic.size()) == 0;
}

#if SINGA_IMAGE
// ---- JPEG (libjpeg) ---------------------------------------------------------

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};

// libjpeg reports errors by longjmp: the decode writes through `img` only,
// so no C++ object of this frame changes between setjmp and longjmp.
bool ReadJpeg(Bytes b, Image* img) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = [](j_common_ptr c) {
    std::longjmp(reinterpret_cast<JpegError*>(c->err)->jump, 1);
  };
  err.mgr.output_message = [](j_common_ptr) {};  // warnings are not printed
  // Data that ends early is an error (libjpeg would pad the image with grey).
  err.mgr.emit_message = [](j_common_ptr c, int level) {
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
      std::longjmp(reinterpret_cast<JpegError*>(c->err)->jump, 1);
  };
  jpeg_create_decompress(&cinfo);
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_mem_src(&cinfo, b.data(), b.size());
  jpeg_read_header(&cinfo, TRUE);
  const bool gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
  if (!gray && cinfo.num_components != 3) {  // CMYK, YCCK: not decoded
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  cinfo.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  img->height = cinfo.image_height;
  img->width = cinfo.image_width;
  img->channels = gray ? 1 : 3;
  img->pixels.resize(img->height * img->width * img->channels);
  jpeg_start_decompress(&cinfo);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = img->pixels.data() + cinfo.output_scanline * img->width * img->channels;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

std::optional<Image> DecodeJpeg(Bytes b) {
  Image img;
  if (!ReadJpeg(b, &img)) return std::nullopt;
  return img;
}

// ---- PNG (libpng) -----------------------------------------------------------

struct PngReader {
  Bytes b;
  size_t pos = 0;
};

// libpng reports errors by longjmp, as libjpeg (see ReadJpeg).
bool ReadPng(Bytes b, Image* img, std::vector<png_bytep>* rows) {
  PngReader reader{b, 0};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr,
                                           [](png_structp, png_const_charp) {});
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &reader, [](png_structp p, png_bytep out, png_size_t n) {
    auto* r = static_cast<PngReader*>(png_get_io_ptr(p));
    if (n > r->b.size() - r->pos) png_error(p, "truncated");
    std::memcpy(out, r->b.data() + r->pos, n);
    r->pos += n;
  });
  png_read_info(png, info);
  const int color = png_get_color_type(png, info);
  png_set_strip_16(png);  // the high byte
  png_set_strip_alpha(png);
  png_set_palette_to_rgb(png);
  png_set_expand_gray_1_2_4_to_8(png);
  png_read_update_info(png, info);
  img->height = png_get_image_height(png, info);
  img->width = png_get_image_width(png, info);
  img->channels = (color & PNG_COLOR_MASK_COLOR) ? 3 : 1;
  img->pixels.resize(img->height * img->width * img->channels);
  rows->resize(img->height);
  for (int64_t y = 0; y < img->height; ++y)
    (*rows)[y] = img->pixels.data() + y * img->width * img->channels;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

std::optional<Image> DecodePng(Bytes b) {
  Image img;
  std::vector<png_bytep> rows;
  if (!ReadPng(b, &img, &rows)) return std::nullopt;
  return img;
}

// ---- TIFF (libtiff) ---------------------------------------------------------

struct TiffReader {
  Bytes b;
  toff_t pos = 0;
};

std::optional<Image> DecodeTiff(Bytes b) {
  static const bool quiet = [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
    return true;
  }();
  (void)quiet;
  TiffReader r{b, 0};
  TIFF* tif = TIFFClientOpen(
      "image", "rm", &r,
      [](thandle_t h, tdata_t out, tsize_t n) -> tsize_t {
        auto* r = static_cast<TiffReader*>(h);
        const tsize_t got = std::min<tsize_t>(n, r->pos < r->b.size() ? r->b.size() - r->pos : 0);
        if (got > 0) std::memcpy(out, r->b.data() + r->pos, got);
        r->pos += got;
        return got;
      },
      [](thandle_t, tdata_t, tsize_t) -> tsize_t { return -1; },
      [](thandle_t h, toff_t off, int whence) -> toff_t {
        auto* r = static_cast<TiffReader*>(h);
        const toff_t base = whence == SEEK_CUR ? r->pos : whence == SEEK_END ? r->b.size() : 0;
        return r->pos = base + off;
      },
      [](thandle_t) { return 0; },
      [](thandle_t h) -> toff_t { return static_cast<TiffReader*>(h)->b.size(); },
      [](thandle_t, tdata_t*, toff_t*) { return 0; }, [](thandle_t, tdata_t, toff_t) {});
  if (!tif) return std::nullopt;
  uint32_t w = 0, h = 0;
  uint16_t spp = 1, photometric = PHOTOMETRIC_RGB;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PHOTOMETRIC, &photometric);
  Image img;
  img.height = h;
  img.width = w;
  img.channels =
      (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE) ? 1 : 3;
  bool ok = w > 0 && h > 0;
  if (ok) {
    std::vector<uint32_t> rgba(static_cast<size_t>(w) * h);
    ok = TIFFReadRGBAImageOriented(tif, w, h, rgba.data(), ORIENTATION_TOPLEFT, 0) == 1;
    img.pixels.resize(rgba.size() * img.channels);
    for (size_t i = 0; ok && i < rgba.size(); ++i) {
      if (img.channels == 1) {
        img.pixels[i] = TIFFGetR(rgba[i]);
        continue;
      }
      img.pixels[3 * i] = TIFFGetR(rgba[i]);
      img.pixels[3 * i + 1] = TIFFGetG(rgba[i]);
      img.pixels[3 * i + 2] = TIFFGetB(rgba[i]);
    }
  }
  TIFFClose(tif);
  if (!ok) return std::nullopt;
  return img;
}

// ---- WebP (libwebp) ---------------------------------------------------------

std::optional<Image> DecodeWebp(Bytes b) {
  Image img;
  int w = 0, h = 0;
  if (!WebPGetInfo(b.data(), b.size(), &w, &h)) return std::nullopt;
  img.height = h;
  img.width = w;
  img.pixels.resize(static_cast<size_t>(w) * h * 3);
  if (!WebPDecodeRGBInto(b.data(), b.size(), img.pixels.data(), img.pixels.size(), w * 3))
    return std::nullopt;
  return img;
}

// ---- JPEG 2000 (OpenJPEG) ---------------------------------------------------

struct J2kReader {
  Bytes b;
  size_t pos = 0;
};

std::optional<Image> DecodeJpeg2000(Bytes b, bool codestream) {
  J2kReader r{b, 0};
  opj_stream_t* stream = opj_stream_create(64 * 1024, OPJ_TRUE);
  opj_stream_set_user_data(stream, &r, nullptr);
  opj_stream_set_user_data_length(stream, b.size());
  opj_stream_set_read_function(stream, [](void* out, OPJ_SIZE_T n, void* h) -> OPJ_SIZE_T {
    auto* r = static_cast<J2kReader*>(h);
    const size_t got = std::min(n, r->b.size() - r->pos);
    if (got == 0) return static_cast<OPJ_SIZE_T>(-1);
    std::memcpy(out, r->b.data() + r->pos, got);
    r->pos += got;
    return got;
  });
  opj_stream_set_skip_function(stream, [](OPJ_OFF_T n, void* h) -> OPJ_OFF_T {
    auto* r = static_cast<J2kReader*>(h);
    const OPJ_OFF_T step = std::min<OPJ_OFF_T>(n, r->b.size() - r->pos);
    r->pos += step;
    return step;
  });
  opj_stream_set_seek_function(stream, [](OPJ_OFF_T to, void* h) -> OPJ_BOOL {
    auto* r = static_cast<J2kReader*>(h);
    if (to < 0 || static_cast<size_t>(to) > r->b.size()) return OPJ_FALSE;
    r->pos = to;
    return OPJ_TRUE;
  });
  opj_codec_t* codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  opj_image_t* image = nullptr;
  bool ok = opj_setup_decoder(codec, &params) && opj_read_header(stream, codec, &image) &&
            opj_decode(codec, stream, image) && opj_end_decompress(codec, stream);
  Image img;
  if (ok) {
    const opj_image_comp_t* c = image->comps;
    const int n = image->numcomps >= 3 ? 3 : 1;
    img.height = c[0].h;
    img.width = c[0].w;
    img.channels = n;
    for (int k = 0; k < n; ++k)
      ok = ok && c[k].w == c[0].w && c[k].h == c[0].h && c[k].prec >= 1 && c[k].prec <= 16;
    if (ok) {
      img.pixels.resize(img.height * img.width * n);
      for (int k = 0; k < n; ++k) {
        const int shift = c[k].prec > 8 ? c[k].prec - 8 : 0;
        const int offset = c[k].sgnd ? 1 << (c[k].prec - 1) : 0;
        for (int64_t i = 0; i < img.height * img.width; ++i)
          img.pixels[i * n + k] =
              static_cast<uint8_t>(std::clamp((c[k].data[i] + offset) >> shift, 0, 255));
      }
    }
  }
  if (image) opj_image_destroy(image);
  opj_destroy_codec(codec);
  opj_stream_destroy(stream);
  if (!ok) return std::nullopt;
  return img;
}
#else
[[noreturn]] void WithoutCodec(const char* format) {
  throw UnsupportedOp(std::string("ImageDecoder: singa was built without the image codecs "
                                  "(SINGA_IMAGE=OFF) and cannot decode this ") +
                      format +
                      " stream; it decodes BMP and PNM, and a build with libjpeg, libpng, "
                      "libtiff, libwebp and OpenJPEG (-DSINGA_IMAGE=ON) decodes the rest");
}
std::optional<Image> DecodeJpeg(Bytes) { WithoutCodec("JPEG"); }
std::optional<Image> DecodePng(Bytes) { WithoutCodec("PNG"); }
std::optional<Image> DecodeTiff(Bytes) { WithoutCodec("TIFF"); }
std::optional<Image> DecodeWebp(Bytes) { WithoutCodec("WebP"); }
std::optional<Image> DecodeJpeg2000(Bytes, bool) { WithoutCodec("JPEG 2000"); }
#endif

// ---- BMP ----------------------------------------------------------------------

uint32_t Le(Bytes b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}

// Uncompressed 1/4/8-bit (palette), 24-bit and 32-bit (BGRX) bitmaps;
// rows bottom-up unless the height is negative.
std::optional<Image> DecodeBmp(Bytes b) {
  if (b.size() < 54) return std::nullopt;
  const uint32_t data_at = Le(b, 10, 4), header = Le(b, 14, 4);
  const int32_t w = static_cast<int32_t>(Le(b, 18, 4)), h = static_cast<int32_t>(Le(b, 22, 4));
  const int bpp = Le(b, 28, 2);
  const uint32_t compression = Le(b, 30, 4);
  if (header < 40 || w <= 0 || h == 0 || (compression != 0 && compression != 3) ||
      (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32))
    return std::nullopt;
  Image img;
  img.width = w;
  img.height = h < 0 ? -static_cast<int64_t>(h) : h;
  const size_t stride = ((static_cast<size_t>(w) * bpp + 31) / 32) * 4;
  if (data_at + stride * img.height > b.size()) return std::nullopt;
  const size_t palette_at = 14 + header;
  uint32_t colors = Le(b, 46, 4);
  if (colors == 0 && bpp <= 8) colors = 1u << bpp;
  if (bpp <= 8 && palette_at + 4 * colors > b.size()) return std::nullopt;
  img.pixels.resize(img.height * img.width * 3);
  for (int64_t y = 0; y < img.height; ++y) {
    const uint8_t* row = b.data() + data_at + stride * (h < 0 ? y : img.height - 1 - y);
    uint8_t* out = img.pixels.data() + y * img.width * 3;
    for (int64_t x = 0; x < w; ++x, out += 3) {
      const uint8_t* bgr;
      if (bpp <= 8) {
        const int per_byte = 8 / bpp;
        const uint32_t index =
            (row[x / per_byte] >> ((per_byte - 1 - x % per_byte) * bpp)) & ((1u << bpp) - 1);
        if (index >= colors) return std::nullopt;
        bgr = b.data() + palette_at + 4 * index;
      } else {
        bgr = row + x * (bpp / 8);
      }
      out[0] = bgr[2];
      out[1] = bgr[1];
      out[2] = bgr[0];
    }
  }
  return img;
}

// ---- PNM (P1-P6) ------------------------------------------------------------

// Netpbm: a header of whitespace-separated numbers (with # comments), then
// ASCII (P1-P3) or binary (P4-P6) samples; samples scale to 0..255 from
// maxval (16-bit binary samples are big-endian).
std::optional<Image> DecodePnm(Bytes b) {
  const int kind = b[1] - '0';
  size_t pos = 2;
  auto skip_space = [&] {
    while (pos < b.size() && (std::isspace(b[pos]) || b[pos] == '#')) {
      if (b[pos] == '#')
        while (pos < b.size() && b[pos] != '\n') ++pos;
      else
        ++pos;
    }
  };
  auto number = [&]() -> std::optional<int64_t> {
    skip_space();
    if (pos >= b.size() || !std::isdigit(b[pos])) return std::nullopt;
    int64_t v = 0;
    while (pos < b.size() && std::isdigit(b[pos]) && v < (int64_t{1} << 31))
      v = v * 10 + (b[pos++] - '0');
    return v;
  };
  const bool bitmap = kind == 1 || kind == 4;
  auto w = number(), h = number();
  std::optional<int64_t> maxval = bitmap ? std::optional<int64_t>(1) : number();
  if (!w || !h || !maxval || *w <= 0 || *h <= 0 || *maxval <= 0 || *maxval > 65535)
    return std::nullopt;
  Image img;
  img.width = *w;
  img.height = *h;
  img.channels = (kind == 3 || kind == 6) ? 3 : 1;
  ++pos;  // the single whitespace before binary samples
  const int64_t n = img.height * img.width * img.channels;
  img.pixels.resize(n);
  const int64_t max = *maxval;
  auto scale = [&](int64_t v) {
    return static_cast<uint8_t>(bitmap ? (v ? 0 : 255) : (std::min(v, max) * 255 + max / 2) / max);
  };
  if (kind <= 3) {
    --pos;
    for (int64_t i = 0; i < n; ++i) {
      if (kind == 1) {  // digits need no separators
        skip_space();
        if (pos >= b.size()) return std::nullopt;
        img.pixels[i] = scale(b[pos++] == '1');
        continue;
      }
      auto v = number();
      if (!v) return std::nullopt;
      img.pixels[i] = scale(*v);
    }
  } else if (kind == 4) {
    const int64_t stride = (img.width + 7) / 8;
    if (pos + stride * img.height > b.size()) return std::nullopt;
    for (int64_t y = 0; y < img.height; ++y)
      for (int64_t x = 0; x < img.width; ++x)
        img.pixels[y * img.width + x] = scale((b[pos + y * stride + x / 8] >> (7 - x % 8)) & 1);
  } else {
    const int bytes = max > 255 ? 2 : 1;
    if (pos + n * bytes > b.size()) return std::nullopt;
    for (int64_t i = 0; i < n; ++i)
      img.pixels[i] = scale(bytes == 2 ? (b[pos + 2 * i] << 8) | b[pos + 2 * i + 1] : b[pos + i]);
  }
  return img;
}

std::optional<Image> Decode(Bytes b) {
  if (StartsWith(b, "\xff\xd8\xff")) return DecodeJpeg(b);
  if (StartsWith(b, "\x89PNG\r\n\x1a\n")) return DecodePng(b);
  if (StartsWith(b, "II*") || StartsWith(b, std::string_view("MM\0*", 4))) return DecodeTiff(b);
  if (b.size() >= 12 && StartsWith(b, "RIFF") && StartsWith(b.subspan(8), "WEBP"))
    return DecodeWebp(b);
  if (StartsWith(b, "\xff\x4f\xff\x51")) return DecodeJpeg2000(b, true);
  if (StartsWith(b, std::string_view("\0\0\0\x0cjP  \r\n\x87\n", 12)))
    return DecodeJpeg2000(b, false);
  if (StartsWith(b, "BM")) return DecodeBmp(b);
  if (b.size() >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' && std::isspace(b[2]))
    return DecodePnm(b);
  return std::nullopt;
}

int Channels(const DecoderAttrs& a) { return a.pixel_format == "Grayscale" ? 1 : 3; }

Bytes Encoded(const Tensor& t) { return {t.data<uint8_t>(), static_cast<size_t>(t.numel())}; }

SpecList DecoderInfer(const InferCtx& c, const DecoderAttrs& a) {
  SINGA_CHECK(
      a.pixel_format == "RGB" || a.pixel_format == "BGR" || a.pixel_format == "Grayscale",
      InvalidModel,
      c.where() << ": pixel_format must be RGB, BGR or Grayscale, got '" << a.pixel_format << "'");
  SINGA_CHECK(c.rank(0) == 1, ShapeError,
              c.where() << ": encoded_stream must be 1-D, got " << c.inputs_string());
  const Tensor encoded = c.value(0).Contiguous();
  std::optional<Image> img = Decode(Encoded(encoded));
  return {{DType::kUInt8, {img ? img->height : 0, img ? img->width : 0, Channels(a)}}};
}

void DecoderForward(KernelCtx& k, const DecoderAttrs& a) {
  const Tensor encoded = k.input(0).Contiguous();
  const Tensor& y = k.output(0);
  std::optional<Image> img = Decode(Encoded(encoded));
  // Sized at inference; a replayed graph whose input changed its image size
  // cannot be served.
  const Shape want = {img ? img->height : 0, img ? img->width : 0, Channels(a)};
  SINGA_CHECK(y.shape() == want, ShapeError,
              "ImageDecoder: the image is now " << want[0] << "x" << want[1]
                                                << ", the output was sized for " << y.ToString());
  if (!img || y.numel() == 0) return;
  const int64_t n = img->height * img->width;
  const uint8_t* p = img->pixels.data();
  uint8_t* out = y.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* px = p + i * img->channels;
    const uint8_t r = px[0], g = img->channels == 3 ? px[1] : px[0],
                  b = img->channels == 3 ? px[2] : px[0];
    if (a.pixel_format == "Grayscale") {
      out[i] = img->channels == 1
                   ? r
                   : static_cast<uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16);
    } else if (a.pixel_format == "BGR") {
      out[3 * i] = b, out[3 * i + 1] = g, out[3 * i + 2] = r;
    } else {
      out[3 * i] = r, out[3 * i + 1] = g, out[3 * i + 2] = b;
    }
  }
}

}  // namespace

SINGA_REGISTER_OP(ImageDecoder, DecoderAttrs)
    .since_opset(20)
    .inputs({"encoded_stream"})
    .outputs({"image"})
    .attr("pixel_format", &DecoderAttrs::pixel_format)
    .dtypes({DType::kUInt8}, {0})
    .infer(DecoderInfer)
    .kernel(DecoderForward);

}  // namespace singa
