// .npy: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// .npz: a zip archive (PKWARE APPNOTE) of NAME.npy entries; numpy writes
// them with zip64 extra fields, which the reader follows.
#include "singa/core/npy.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>

namespace singa {
namespace {

struct Descr {
  const char* code;  // without the byte-order character
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"b1", DType::kBool},      {"i1", DType::kInt8},       {"u1", DType::kUInt8},
    {"i2", DType::kInt16},     {"u2", DType::kUInt16},     {"i4", DType::kInt32},
    {"u4", DType::kUInt32},    {"i8", DType::kInt64},      {"u8", DType::kUInt64},
    {"f2", DType::kFloat16},   {"f4", DType::kFloat32},    {"f8", DType::kFloat64},
    {"c8", DType::kComplex64}, {"c16", DType::kComplex128}};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  SINGA_CHECK(out, IOError, "cannot write '" << path << "': " << std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  SINGA_CHECK(out, IOError, "writing '" << path << "' failed");
}

// Whether b holds n bytes at offset `at`, for any offsets a corrupt file claims.
bool Holds(std::string_view b, uint64_t at, uint64_t n) {
  return at <= b.size() && n <= b.size() - at;
}

uint64_t Le(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

void PutLe(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The value of `key` in the header's Python dict literal, as written.
std::string_view HeaderField(std::string_view header, std::string_view key,
                             const std::string& what) {
  // Built by appends: GCC 12 warns (-Wrestrict, falsely) on "'" + std::string(key).
  std::string quoted(1, '\'');
  quoted.append(key).push_back('\'');
  size_t at = header.find(quoted);
  SINGA_CHECK(at != std::string_view::npos, IOError,
              what << ": the .npy header has no '" << key << "'");
  at = header.find(':', at + quoted.size());
  SINGA_CHECK(at != std::string_view::npos, IOError, what << ": malformed .npy header");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  SINGA_CHECK(at < header.size(), IOError, what << ": malformed .npy header");
  size_t end = at;
  if (header[at] == '(') {
    end = header.find(')', at);
    SINGA_CHECK(end != std::string_view::npos, IOError, what << ": malformed .npy shape");
    return header.substr(at + 1, end - at - 1);
  }
  if (header[at] == '\'') {
    end = header.find('\'', at + 1);
    SINGA_CHECK(end != std::string_view::npos, IOError, what << ": malformed .npy header");
    return header.substr(at + 1, end - at - 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(at, end - at);
}

Shape ParseShape(std::string_view s, const std::string& what) {
  Shape shape;
  size_t at = 0;
  while (at < s.size()) {
    while (at < s.size() && (s[at] == ' ' || s[at] == ',')) ++at;
    if (at >= s.size()) break;
    int64_t d = -1;
    auto [end, err] = std::from_chars(s.data() + at, s.data() + s.size(), d);
    SINGA_CHECK(err == std::errc() && d >= 0, IOError, what << ": bad .npy shape (" << s << ")");
    shape.push_back(d);
    at = end - s.data();
  }
  return shape;
}

// UTF-32 code points (numpy's 'U' type) to UTF-8 and back.
std::string Utf8(const char32_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && p[i]; ++i) {
    const char32_t c = p[i];
    if (c < 0x80) {
      s.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      s.push_back(static_cast<char>(0xc0 | (c >> 6)));
      s.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      s.push_back(static_cast<char>(0xe0 | (c >> 12)));
      s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      s.push_back(static_cast<char>(0xf0 | (c >> 18)));
      s.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
  return s;
}

std::u32string Utf32(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    const int n = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    char32_t c = n == 1 ? b : b & (0x3f >> (n - 1));
    for (int k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (s[i + k] & 0x3f);
    out.push_back(c);
    i += n;
  }
  return out;
}

std::string Inflate(std::string_view data, size_t size, const std::string& what) {
  std::string out(size, '\0');
  z_stream z{};
  // Negative window bits: a raw deflate stream, as zip stores it.
  SINGA_CHECK(inflateInit2(&z, -MAX_WBITS) == Z_OK, IOError, what << ": zlib init failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  SINGA_CHECK(rc == Z_STREAM_END && z.total_out == size, IOError,
              what << ": the compressed entry is corrupt");
  return out;
}

}  // namespace

Tensor ParseNpy(std::string_view b, const std::string& what) {
  SINGA_CHECK(b.size() >= 10 && b.substr(0, 6) == "\x93NUMPY", IOError,
              what << " is not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<uint8_t>(b[6]);
  SINGA_CHECK(major >= 1 && major <= 3, IOError, what << ": .npy format version " << major);
  const size_t len_bytes = major == 1 ? 2 : 4;
  SINGA_CHECK(b.size() >= 8 + len_bytes, IOError, what << ": truncated .npy header");
  const size_t header_len = Le(b, 8, static_cast<int>(len_bytes));
  const size_t data_at = 8 + len_bytes + header_len;
  SINGA_CHECK(b.size() >= data_at, IOError, what << ": truncated .npy header");
  const std::string_view header = b.substr(8 + len_bytes, header_len);

  const std::string_view descr = HeaderField(header, "descr", what);
  const bool fortran = HeaderField(header, "fortran_order", what).starts_with("True");
  Shape shape = ParseShape(HeaderField(header, "shape", what), what);
  SINGA_CHECK(!descr.empty(), IOError, what << ": empty dtype in the .npy header");
  const char order = descr[0];
  const std::string_view code = descr.substr(1);
  SINGA_CHECK(order == '<' || order == '|' || order == '=', IOError,
              what << ": big-endian data ('" << descr << "') is not supported");

  DType dtype = DType::kUndefined;
  size_t unicode_chars = 0;
  for (const Descr& d : kDescrs)
    if (code == d.code) dtype = d.dtype;
  if (code.starts_with("U")) {
    dtype = DType::kString;
    const auto [end, err] =
        std::from_chars(code.data() + 1, code.data() + code.size(), unicode_chars);
    SINGA_CHECK(err == std::errc(), IOError, what << ": bad string dtype '" << descr << "'");
  }
  SINGA_CHECK(dtype != DType::kUndefined, IOError,
              what << ": numpy dtype '" << descr
                   << "' is not supported (bool, ints, floats, complex or unicode)");

  // The size the header promises, checked against the file before anything
  // is allocated (a corrupt header must not ask for exabytes).
  size_t item = SizeOf(dtype);
  SINGA_CHECK(dtype != DType::kString || !__builtin_mul_overflow(unicode_chars, size_t{4}, &item),
              IOError, what << ": string dtype '" << descr << "' is too long");
  size_t want = item;
  int64_t n = 1;
  for (int64_t d : shape) {
    SINGA_CHECK(!__builtin_mul_overflow(n, d, &n) &&
                    !__builtin_mul_overflow(want, static_cast<size_t>(d), &want),
                IOError, what << ": the .npy shape " << ToString(shape) << " is too large");
  }
  SINGA_CHECK(b.size() - data_at >= want, IOError,
              what << ": " << b.size() - data_at << " bytes of data for " << descr
                   << ToString(shape) << " (expected " << want << "; truncated file?)");
  // Fortran order: the data is the C-order array of the reversed shape.
  Shape stored = shape;
  if (fortran) std::reverse(stored.begin(), stored.end());
  Tensor t(stored, dtype);
  const char* data = b.data() + data_at;
  if (dtype == DType::kString) {
    std::string* out = t.data<std::string>();
    // Sized only when there are elements: then the file holds them all.
    std::u32string buf(n > 0 ? unicode_chars : 0, U'\0');
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(buf.data(), data + i * item, item);
      out[i] = Utf8(buf.data(), unicode_chars);
    }
  } else if (dtype == DType::kBool) {
    auto* out = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < n; ++i) out[i] = data[i] != 0;
  } else if (want > 0) {
    std::memcpy(t.raw_data(), data, want);
  }
  if (!fortran || t.ndim() < 2) return t;
  std::vector<int64_t> perm(t.ndim());
  for (int64_t i = 0; i < t.ndim(); ++i) perm[i] = t.ndim() - 1 - i;
  return t.Permute(perm).Contiguous();
}

std::string NpyBytes(const Tensor& in) {
  SINGA_CHECK(in.defined(), IOError, "cannot write an undefined tensor as .npy");
  Tensor t = in;
  // numpy has no bfloat16, float8 or float4: their values go out as float32.
  switch (t.dtype()) {
    case DType::kBFloat16:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
      t = t.AsType(DType::kFloat32);
      break;
    default:
      break;
  }
  t = t.Contiguous();
  const int64_t n = t.numel();
  std::string descr;
  size_t unicode_chars = 0;
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      unicode_chars = std::max(unicode_chars, Utf32(t.data<std::string>()[i]).size());
    // numpy's '<U0' is legal but odd; one character holds empty strings.
    unicode_chars = std::max<size_t>(unicode_chars, 1);
    descr = "<U" + std::to_string(unicode_chars);
  } else if (t.dtype() == DType::kInt4) {
    descr = "|i1";  // int4 and uint4 are held one per byte already
  } else if (t.dtype() == DType::kUInt4) {
    descr = "|u1";
  } else {
    for (const Descr& d : kDescrs)
      if (d.dtype == t.dtype()) descr = std::string(SizeOf(d.dtype) == 1 ? "|" : "<") + d.code;
  }
  SINGA_CHECK(!descr.empty(), IOError, "cannot write a " << Name(t.dtype()) << " tensor as .npy");

  // Python's tuple syntax: "()", "(3,)", "(2, 3)".
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Data starts at a multiple of 64 bytes; the header ends with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  std::string out = "\x93NUMPY";
  out.push_back(1);
  out.push_back(0);
  SINGA_CHECK(header.size() <= 0xffff, IOError, "the .npy header is too long");
  PutLe(out, header.size(), 2);
  out += header;
  if (t.dtype() == DType::kString) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) * 4 * unicode_chars, '\0');
    for (int64_t i = 0; i < n; ++i) {
      const std::u32string s = Utf32(t.data<std::string>()[i]);
      std::memcpy(out.data() + at + i * 4 * unicode_chars, s.data(), 4 * s.size());
    }
  } else {
    out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SINGA_CHECK(in, IOError, "cannot open '" << path << "': " << std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SINGA_CHECK(!in.bad(), IOError, "reading '" << path << "' failed");
  return bytes;
}

Tensor ReadNpy(const std::string& path) { return ParseNpy(ReadFile(path), "'" + path + "'"); }

void WriteNpy(const std::string& path, const Tensor& t) { WriteFile(path, NpyBytes(t)); }

NamedTensors ReadNpz(const std::string& path) { return ParseNpz(ReadFile(path), "'" + path + "'"); }

ZipEntries ParseZip(std::string_view b, const std::string& what, std::string_view kind) {
  // The end-of-central-directory record: 22 bytes plus a comment of < 64 KiB.
  size_t eocd = std::string_view::npos;
  if (b.size() >= 22) {
    const size_t lowest = b.size() > 22 + 0xffff ? b.size() - 22 - 0xffff : 0;
    for (size_t i = b.size() - 22 + 1; i-- > lowest;) {
      if (Le(b, i, 4) == 0x06054b50) {
        eocd = i;
        break;
      }
    }
  }
  SINGA_CHECK(eocd != std::string_view::npos, IOError,
              what << " is not " << kind << " (no zip directory)");
  uint64_t entries = Le(b, eocd + 10, 2), cd_offset = Le(b, eocd + 16, 4);
  if (eocd >= 20 && Le(b, eocd - 20, 4) == 0x07064b50) {
    // zip64: the real counts and offsets are in the zip64 end record.
    const uint64_t z64 = Le(b, eocd - 20 + 8, 8);
    SINGA_CHECK(Holds(b, z64, 56) && Le(b, z64, 4) == 0x06064b50, IOError,
                what << ": corrupt zip64 directory");
    entries = Le(b, z64 + 32, 8);
    cd_offset = Le(b, z64 + 48, 8);
  }
  ZipEntries out;
  size_t at = cd_offset;
  for (uint64_t e = 0; e < entries; ++e) {
    SINGA_CHECK(Holds(b, at, 46) && Le(b, at, 4) == 0x02014b50, IOError,
                what << ": corrupt zip directory");
    const uint64_t method = Le(b, at + 10, 2), crc = Le(b, at + 16, 4);
    uint64_t csize = Le(b, at + 20, 4), usize = Le(b, at + 24, 4), local = Le(b, at + 42, 4);
    const size_t name_len = Le(b, at + 28, 2), extra_len = Le(b, at + 30, 2),
                 comment_len = Le(b, at + 32, 2);
    SINGA_CHECK(Holds(b, at + 46, name_len + extra_len), IOError,
                what << ": corrupt zip directory");
    std::string name(b.substr(at + 46, name_len));
    // A zip64 extra field holds the 8-byte values whose 4-byte fields are 0xffffffff.
    const size_t extra_end = at + 46 + name_len + extra_len;
    for (size_t x = at + 46 + name_len; x + 4 <= extra_end;) {
      const uint64_t id = Le(b, x, 2), len = Le(b, x + 2, 2);
      if (id == 1) {
        size_t f = x + 4;
        const auto field = [&](uint64_t& v) {
          if (v != 0xffffffff) return;
          SINGA_CHECK(f + 8 <= extra_end, IOError, what << ": corrupt zip64 extra field");
          v = Le(b, f, 8);
          f += 8;
        };
        field(usize);
        field(csize);
        field(local);
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;

    const std::string entry = what + " entry '" + name + "'";
    SINGA_CHECK(Holds(b, local, 30) && Le(b, local, 4) == 0x04034b50, IOError,
                entry << ": corrupt zip entry");
    const size_t data_at = local + 30 + Le(b, local + 26, 2) + Le(b, local + 28, 2);
    SINGA_CHECK(Holds(b, data_at, csize), IOError, entry << ": truncated");
    // Deflate expands at most ~1032:1; a larger claimed size is corruption.
    SINGA_CHECK(method == 0 ? usize == csize : usize / 1032 <= csize + 1, IOError,
                entry << ": corrupt sizes in the zip directory");
    std::string data;
    if (method == 0) {
      data = std::string(b.substr(data_at, csize));
    } else {
      SINGA_CHECK(method == 8, IOError,
                  entry << ": zip compression method " << method
                        << " is not supported (stored or deflated)");
      data = Inflate(b.substr(data_at, csize), usize, entry);
    }
    SINGA_CHECK(crc32(0, reinterpret_cast<const Bytef*>(data.data()),
                      static_cast<uInt>(data.size())) == crc,
                IOError, entry << ": CRC mismatch (corrupt file)");
    out.emplace_back(std::move(name), std::move(data));
  }
  return out;
}

NamedTensors ParseNpz(std::string_view b, const std::string& what) {
  NamedTensors out;
  for (auto& [name, data] : ParseZip(b, what, "an .npz file")) {
    const std::string entry = what + " entry '" + name + "'";
    std::string key = name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
    out.emplace_back(std::move(key), ParseNpy(data, entry));
  }
  return out;
}

void WriteNpz(const std::string& path, const NamedTensors& arrays) {
  WriteFile(path, NpzBytes(arrays, "'" + path + "'"));
}

std::string NpzBytes(const NamedTensors& arrays, const std::string& what) {
  ZipEntries entries;
  for (const auto& [name, t] : arrays) entries.emplace_back(name + ".npy", NpyBytes(t));
  return ZipBytes(entries, what);
}

std::string ZipBytes(const ZipEntries& entries, const std::string& what) {
  std::string zip, directory;
  // 1980-01-01 00:00, the earliest DOS date: the files carry no timestamp.
  constexpr uint16_t kDate = (0 << 9) | (1 << 5) | 1, kTime = 0;
  for (const auto& [entry, data] : entries) {
    SINGA_CHECK(data.size() < 0xffffffffu && zip.size() < 0xffffffffu, IOError,
                what << ": entries over 4 GiB need zip64, which the writer does not do");
    const uint32_t crc =
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    const size_t local = zip.size();
    PutLe(zip, 0x04034b50, 4);
    PutLe(zip, 20, 2);  // version needed: 2.0
    PutLe(zip, 0, 2);   // flags
    PutLe(zip, 0, 2);   // stored
    PutLe(zip, kTime, 2);
    PutLe(zip, kDate, 2);
    PutLe(zip, crc, 4);
    PutLe(zip, data.size(), 4);
    PutLe(zip, data.size(), 4);
    PutLe(zip, entry.size(), 2);
    PutLe(zip, 0, 2);
    zip += entry;
    zip += data;

    PutLe(directory, 0x02014b50, 4);
    PutLe(directory, 20, 2);  // made by
    PutLe(directory, 20, 2);  // needed
    PutLe(directory, 0, 2);
    PutLe(directory, 0, 2);
    PutLe(directory, kTime, 2);
    PutLe(directory, kDate, 2);
    PutLe(directory, crc, 4);
    PutLe(directory, data.size(), 4);
    PutLe(directory, data.size(), 4);
    PutLe(directory, entry.size(), 2);
    PutLe(directory, 0, 2);  // extra
    PutLe(directory, 0, 2);  // comment
    PutLe(directory, 0, 2);  // disk
    PutLe(directory, 0, 2);  // internal attributes
    PutLe(directory, 0, 4);  // external attributes
    PutLe(directory, local, 4);
    directory += entry;
  }
  SINGA_CHECK(entries.size() < 0xffff && zip.size() < 0xffffffffu, IOError,
              what << ": too many or too large entries for a zip without zip64");
  const size_t cd_offset = zip.size();
  zip += directory;
  PutLe(zip, 0x06054b50, 4);
  PutLe(zip, 0, 2);
  PutLe(zip, 0, 2);
  PutLe(zip, entries.size(), 2);
  PutLe(zip, entries.size(), 2);
  PutLe(zip, directory.size(), 4);
  PutLe(zip, cd_offset, 4);
  PutLe(zip, 0, 2);
  return zip;
}

}  // namespace singa
