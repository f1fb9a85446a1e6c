// A small, dependency-free SVG line-plot writer, shared by `hsdp compare` and anything else
// that wants a picture of a curve (e.g. an audit plotting epsilon against steps).
//
//   hsdp::svg::LinePlot plot{"eps vs T", "steps T", "epsilon", /*log_x=*/true, /*log_y=*/true,
//                            {{"composition", xs, ys}, {"audit (lower)", xs, lo, /*dashed=*/true}}};
//   std::string svg = hsdp::svg::render(plot);
//
// Points whose y (or x, on a log axis) is not finite or not > 0 on a log axis are not
// drawn: a curve is split into separate polylines at such points, so +inf (no guarantee)
// shows as a gap rather than as a made-up value.
#pragma once

#include <string>
#include <vector>

namespace hsdp::svg {

struct Series {
  std::string name;        ///< legend text (escaped when written)
  std::vector<double> xs;  ///< same length as ys
  std::vector<double> ys;
  bool dashed = false;     ///< drawn with a dash pattern (e.g. lower bounds)
};

struct LinePlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::vector<Series> series;
  /// Lines of text written under the plot (e.g. "not applicable: ..." for left-out curves).
  std::vector<std::string> notes;
  int width = 760;   ///< pixels, >= 200
  int height = 480;  ///< pixels of the plotting frame + margins, >= 150 (notes add height)
};

/// The plot as a standalone SVG 1.1 document. Throws hsdp::InvalidArgument when a series'
/// xs and ys differ in length or the size is out of range. A plot with no drawable point
/// still renders (axes over [0, 1] or [1, 10] and a "no data" message).
std::string render(const LinePlot& plot);

/// Escapes &, <, >, " and ' for SVG/XML text and attribute values, and drops control
/// characters that XML 1.0 forbids.
std::string escape(const std::string& text);

/// Tick positions over [lo, hi]: "nice" steps 1, 2, 5 x 10^k on a linear axis (about
/// `target` ticks); on a log axis (lo > 0) the powers of ten in range, or 1, 2, 5 x 10^k
/// when the range spans less than about two decades.
std::vector<double> ticks(double lo, double hi, bool log_axis, int target = 6);

/// Tick label text: short form, e.g. "0.5", "20", "1e-05", "1e+06".
std::string tick_label(double value);

}  // namespace hsdp::svg
