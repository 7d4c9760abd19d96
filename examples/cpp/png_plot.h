// A small line-chart writer for the C++ examples: curves on a white canvas
// saved as a PNG (zlib does the compression). Enough to show a loss or an
// accuracy curve; not a plotting library.
//
//   PngPlot plot(640, 360);                       // two panels side by side
//   plot.Panel(0, {losses}, {{31, 119, 180}});
//   plot.Panel(1, {train_acc, test_acc}, {{31, 119, 180}, {255, 127, 14}}, 0, 1);
//   plot.Save("out/train_digits_cpp.png");
#pragma once

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace examples {

using Rgb = std::array<uint8_t, 3>;

class PngPlot {
 public:
  // A canvas of `panels` side-by-side panels.
  PngPlot(int width, int height, int panels = 2)
      : w_(width), h_(height), panels_(panels), px_(size_t(width) * height * 3, 255) {}

  // Draws `curves` (one point per epoch) in panel `index`, scaled to
  // [lo, hi] (the data's range when lo == hi).
  void Panel(int index, const std::vector<std::vector<double>>& curves,
             const std::vector<Rgb>& colors, double lo = 0, double hi = 0) {
    const int pw = w_ / panels_, x0 = index * pw + 30, x1 = (index + 1) * pw - 10;
    const int y0 = 10, y1 = h_ - 25;
    if (lo == hi) {
      lo = 1e300, hi = -1e300;
      for (auto& c : curves)
        for (double v : c) lo = std::min(lo, v), hi = std::max(hi, v);
      if (lo == hi) hi = lo + 1;
    }
    Rgb axis = {0, 0, 0};
    Line(x0, y1, x1, y1, axis);
    Line(x0, y0, x0, y1, axis);
    for (size_t k = 0; k < curves.size(); ++k) {
      const auto& c = curves[k];
      auto at = [&](size_t i, double v) {
        int x = c.size() > 1 ? x0 + int((x1 - x0) * double(i) / double(c.size() - 1)) : x0;
        int y = y1 - int((y1 - y0) * (v - lo) / (hi - lo));
        return std::array<int, 2>{x, std::clamp(y, y0, y1)};
      };
      for (size_t i = 0; i + 1 < c.size(); ++i) {
        auto a = at(i, c[i]), b = at(i + 1, c[i + 1]);
        for (int t = -1; t <= 1; ++t) Line(a[0], a[1] + t, b[0], b[1] + t, colors[k]);
      }
      for (size_t i = 0; i < c.size(); ++i) {
        auto p = at(i, c[i]);
        for (int dx = -3; dx <= 3; ++dx)
          for (int dy = -3; dy <= 3; ++dy) Set(p[0] + dx, p[1] + dy, colors[k]);
      }
    }
  }

  void Save(const std::string& path) const {
    std::vector<uint8_t> raw;
    raw.reserve(size_t(h_) * (w_ * 3 + 1));
    for (int y = 0; y < h_; ++y) {
      raw.push_back(0);  // filter: none
      raw.insert(raw.end(), px_.begin() + size_t(y) * w_ * 3, px_.begin() + size_t(y + 1) * w_ * 3);
    }
    uLongf zsize = compressBound(uLong(raw.size()));
    std::vector<uint8_t> z(zsize);
    if (compress(z.data(), &zsize, raw.data(), uLong(raw.size())) != Z_OK)
      throw std::runtime_error("png: compression failed");
    z.resize(zsize);
    std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::vector<uint8_t> ihdr;
    Be32(ihdr, uint32_t(w_));
    Be32(ihdr, uint32_t(h_));
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB
    Chunk(out, "IHDR", ihdr);
    Chunk(out, "IDAT", z);
    Chunk(out, "IEND", {});
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("png: cannot write " + path);
    std::fwrite(out.data(), 1, out.size(), f);
    std::fclose(f);
  }

 private:
  void Set(int x, int y, const Rgb& c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    std::copy(c.begin(), c.end(), px_.begin() + (size_t(y) * w_ + x) * 3);
  }
  void Line(int xa, int ya, int xb, int yb, const Rgb& c) {
    const int n = std::max(std::abs(xb - xa), std::abs(yb - ya)) + 1;
    for (int i = 0; i <= n; ++i) Set(xa + (xb - xa) * i / n, ya + (yb - ya) * i / n, c);
  }
  static void Be32(std::vector<uint8_t>& v, uint32_t x) {
    for (int s = 24; s >= 0; s -= 8) v.push_back(uint8_t(x >> s));
  }
  static void Chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
    Be32(out, uint32_t(data.size()));
    std::vector<uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    out.insert(out.end(), body.begin(), body.end());
    Be32(out, uint32_t(crc32(0, body.data(), uInt(body.size()))));
  }
  int w_, h_, panels_;
  std::vector<uint8_t> px_;
};

}  // namespace examples
