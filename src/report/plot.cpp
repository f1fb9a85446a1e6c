// The SVG line-plot writer (include/hsdp/plot.hpp). Plain SVG 1.1 with no scripts, no
// external fonts and no CSS beyond presentation attributes, so that any viewer, browser or
// rsvg-convert renders it the same way.
#include "hsdp/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hsdp/errors.hpp"

namespace hsdp::svg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Okabe-Ito (colour-blind friendly) first, then distinct darker tones; cycled when there are
// more than 14 series.
constexpr std::array<const char*, 14> kPalette = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
    "#8C564B", "#7F7F7F", "#B8860B", "#4B0082", "#2E8B57", "#B22222", "#FF1493"};

// The colour of series k (palette order).
std::string colour_of(std::size_t k) { return kPalette[k % kPalette.size()]; }

constexpr double kCharWidth = 6.6;   // average advance of a 12px sans-serif character
constexpr double kLabelFont = 14.0;  // axis labels
constexpr double kTitleFont = 16.0;

bool drawable(double v, bool log_axis) { return std::isfinite(v) && (!log_axis || v > 0); }

// Maps data value to the axis coordinate (log10 on a log axis).
double coord(double v, bool log_axis) { return log_axis ? std::log10(v) : v; }

// "Nice" step 1, 2 or 5 x 10^k close to span / target.
double nice_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10;
  return nice * mag;
}

struct Range {
  double lo, hi;  // in data units
};

// The axis range: nice bounds around the drawable data (whole decades on a log axis).
Range axis_range(double lo, double hi, bool log_axis) {
  if (!(lo <= hi)) return log_axis ? Range{1, 10} : Range{0, 1};  // no data
  if (log_axis) {
    double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi));
    if (a == b) {
      a -= 0.5;
      b += 0.5;
    }
    return {std::pow(10.0, a), std::pow(10.0, b)};
  }
  if (lo == hi) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double step = nice_step(hi - lo, 6);
  return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step};
}

std::string num(double v) { return fmt::format("{:.2f}", v); }

// Splits a note into lines of at most `width` characters at spaces.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line = fmt::format("  {}", word);  // continuation lines indented
    } else {
      if (!line.empty()) line += ' ';
      line += word;
    }
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows only tab, newline and carriage return below 0x20.
        if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out += c;
    }
  }
  return out;
}

std::vector<double> ticks(double lo, double hi, bool log_axis, int target) {
  std::vector<double> out;
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  if (log_axis) {
    if (!(lo > 0)) return out;
    const double a = std::log10(lo), b = std::log10(hi);
    const double tol = 1e-9;
    if (b - a <= 2.0 + tol) {
      // Less than about two decades: 1, 2, 5 x 10^k.
      for (double k = std::floor(a); k <= std::ceil(b); ++k)
        for (const double m : {1.0, 2.0, 5.0}) {
          const double v = m * std::pow(10.0, k);
          if (std::log10(v) >= a - tol && std::log10(v) <= b + tol) out.push_back(v);
        }
      if (out.size() >= 2) return out;
      out.clear();
      // Narrower still: linear nice ticks inside the range.
      return ticks(lo, hi, false, target);
    }
    // Decade stride from a nice list, ticks at multiples of it (1e-20, 1e-15, ..., 1).
    double stride = 1.0;
    for (const double s : {1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0}) {
      stride = s;
      if ((b - a) / s <= std::max(1, target)) break;
    }
    for (double k = std::ceil(a / stride - tol) * stride; k <= b + tol; k += stride)
      out.push_back(std::pow(10.0, k));
    return out;
  }
  const double step = nice_step(hi - lo, target);
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; ++k) {
    double v = k * step;
    if (std::abs(v) < step * 1e-9) v = 0.0;  // no "-0" or 1e-17 at the origin
    out.push_back(v);
  }
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  const int e = static_cast<int>(std::floor(std::log10(a) + 1e-12));
  const double mantissa = v / std::pow(10.0, e);
  const bool power_of_ten = std::abs(std::abs(mantissa) - 1.0) < 1e-9;
  if (e <= -4 || e >= 6) {
    if (power_of_ten) return fmt::format("{}1e{}", v < 0 ? "-" : "", e);
    return fmt::format("{}e{}", fmt::format("{:.3g}", mantissa), e);
  }
  // Up to 6 significant digits, trailing zeros dropped ("0.5", "20", "0.025").
  return fmt::format("{:.6g}", v);
}

std::string render(const LinePlot& plot) {
  if (plot.width < 200 || plot.width > 20000) fail("plot width", plot.width, "200..20000 pixels");
  if (plot.height < 150 || plot.height > 20000) fail("plot height", plot.height, "150..20000 pixels");
  for (const auto& s : plot.series)
    if (s.xs.size() != s.ys.size())
      fail(fmt::format("series '{}' ys", s.name), std::to_string(s.ys.size()) + " values",
           fmt::format("one per x ({} xs)", s.xs.size()));

  // Data extent over drawable points.
  double xlo = kInf, xhi = -kInf, ylo = kInf, yhi = -kInf;
  for (const auto& s : plot.series)
    for (std::size_t i = 0; i < s.xs.size(); ++i)
      if (drawable(s.xs[i], plot.log_x) && drawable(s.ys[i], plot.log_y)) {
        xlo = std::min(xlo, s.xs[i]);
        xhi = std::max(xhi, s.xs[i]);
        ylo = std::min(ylo, s.ys[i]);
        yhi = std::max(yhi, s.ys[i]);
      }
  const bool has_data = xlo <= xhi;
  // The x range is the data range itself (a sweep's ends), padded only when degenerate;
  // the y range is rounded out to nice values.
  Range xr = has_data && xlo < xhi ? Range{xlo, xhi} : axis_range(xlo, xhi, plot.log_x);
  const Range yr = axis_range(ylo, yhi, plot.log_y);

  // Legend to the right of the frame, sized by the longest entry.
  std::size_t longest = 0;
  for (const auto& s : plot.series) longest = std::max(longest, s.name.size());
  const double legend_w = plot.series.empty() ? 0.0 : 48.0 + kCharWidth * static_cast<double>(longest);
  const double left = 86, right = 20, top = plot.title.empty() ? 20 : 44, bottom = 58;
  const double width = plot.width + legend_w;
  const double frame_w = plot.width - left - right;
  const double frame_h = plot.height - top - bottom;
  std::vector<std::string> note_lines;
  for (const auto& n : plot.notes)
    for (auto& l : wrap(n, static_cast<std::size_t>((width - 20) / kCharWidth))) note_lines.push_back(l);
  const double legend_h = 22.0 * static_cast<double>(plot.series.size()) + 10;
  const double body_h = std::max<double>(plot.height, top + legend_h + 10);
  const double height = body_h + (note_lines.empty() ? 0.0 : 16.0 * note_lines.size() + 10);

  const double cx0 = coord(xr.lo, plot.log_x), cx1 = coord(xr.hi, plot.log_x);
  const double cy0 = coord(yr.lo, plot.log_y), cy1 = coord(yr.hi, plot.log_y);
  auto px = [&](double x) { return left + (coord(x, plot.log_x) - cx0) / (cx1 - cx0) * frame_w; };
  auto py = [&](double y) { return top + frame_h - (coord(y, plot.log_y) - cy0) / (cy1 - cy0) * frame_h; };

  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n",
      num(width), num(height));
  if (!plot.title.empty()) o += fmt::format("<title>{}</title>\n", escape(plot.title));
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", num(width),
                   num(height));
  if (!plot.title.empty())
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>\n",
                     num(left + frame_w / 2), num(top - 18), kTitleFont, escape(plot.title));

  // Grid and ticks.
  o += "<g id=\"axes\" font-size=\"12\" fill=\"#000000\">\n";
  const auto xt = ticks(xr.lo, xr.hi, plot.log_x);
  const auto yt = ticks(yr.lo, yr.hi, plot.log_y);
  for (const double t : xt) {
    const double x = px(t);
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e0e0e0\"/>\n", num(x),
                     num(top), num(top + frame_h));
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000000\"/>\n", num(x),
                     num(top + frame_h), num(top + frame_h + 5));
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x),
                     num(top + frame_h + 18), escape(tick_label(t)));
  }
  for (const double t : yt) {
    const double y = py(t);
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e0e0e0\"/>\n", num(left),
                     num(y), num(left + frame_w));
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\"/>\n",
                     num(left - 5), num(y), num(left));
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", num(left - 8),
                     num(y + 4), escape(tick_label(t)));
  }
  // Minor ticks at 2..9 x 10^k on log axes whose major ticks are single decades.
  auto minor = [&](const std::vector<double>& major, bool log_axis, Range r, bool is_x) {
    if (!log_axis || major.size() < 2 || std::abs(major[1] / major[0] - 10.0) > 1e-6) return;
    for (double k = std::floor(std::log10(r.lo)); k < std::log10(r.hi); ++k)
      for (int m = 2; m <= 9; ++m) {
        const double v = m * std::pow(10.0, k);
        if (v <= r.lo || v >= r.hi) continue;
        if (is_x)
          o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000000\"/>\n",
                           num(px(v)), num(top + frame_h), num(top + frame_h + 3));
        else
          o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\"/>\n",
                           num(left - 3), num(py(v)), num(left));
      }
  };
  minor(xt, plot.log_x, xr, true);
  if (yt.size() <= 12) minor(yt, plot.log_y, yr, false);
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\"/>\n",
                   num(left), num(top), num(frame_w), num(frame_h));
  o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   num(left + frame_w / 2), num(top + frame_h + 42), kLabelFont,
                   escape(plot.x_label + (plot.log_x ? " (log scale)" : "")));
  const double ylx = 20, yly = top + frame_h / 2;
  o += fmt::format(
      "<text x=\"{0}\" y=\"{1}\" font-size=\"{2}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} {1})\">{3}</text>\n",
      num(ylx), num(yly), kLabelFont, escape(plot.y_label + (plot.log_y ? " (log scale)" : "")));
  o += "</g>\n";
  if (!has_data)
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\" fill=\"#7f7f7f\">no data</text>\n",
                     num(left + frame_w / 2), num(top + frame_h / 2));

  // Series: one polyline per run of drawable points; a lone point gets a dot.
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const std::string colour = colour_of(k);
    const std::string dash = s.dashed ? " stroke-dasharray=\"7 4\"" : "";
    o += fmt::format("<g id=\"series-{}\">\n", k + 1);
    std::vector<std::pair<double, double>> run;
    auto flush = [&]() {
      if (run.size() == 1) {
        o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"/>\n", num(run[0].first),
                         num(run[0].second), colour);
      } else if (run.size() > 1) {
        o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"", colour, dash);
        for (std::size_t i = 0; i < run.size(); ++i)
          o += fmt::format("{}{},{}", i ? " " : "", num(run[i].first), num(run[i].second));
        o += "\"/>\n";
      }
      run.clear();
    };
    for (std::size_t i = 0; i < s.xs.size(); ++i) {
      if (drawable(s.xs[i], plot.log_x) && drawable(s.ys[i], plot.log_y))
        run.emplace_back(px(s.xs[i]), py(s.ys[i]));
      else
        flush();
    }
    flush();
    o += "</g>\n";
  }

  // Legend.
  if (!plot.series.empty()) {
    const double lx = left + frame_w + 16, ly = top + 6;
    o += "<g id=\"legend\" font-size=\"12\">\n";
    for (std::size_t k = 0; k < plot.series.size(); ++k) {
      const auto& s = plot.series[k];
      const double y = ly + 22.0 * static_cast<double>(k) + 10;
      o += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>\n",
                       num(lx), num(lx + 30), num(y), colour_of(k),
                       s.dashed ? " stroke-dasharray=\"7 4\"" : "");
      o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(lx + 38), num(y + 4), escape(s.name));
    }
    o += "</g>\n";
  }

  // Notes under the plot.
  if (!note_lines.empty()) {
    o += "<g id=\"notes\" font-size=\"12\" fill=\"#333333\">\n";
    for (std::size_t i = 0; i < note_lines.size(); ++i)
      o += fmt::format("<text x=\"10\" y=\"{}\" xml:space=\"preserve\">{}</text>\n",
                       num(body_h + 8 + 16.0 * static_cast<double>(i + 1) - 4), escape(note_lines[i]));
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace hsdp::svg
