#include "cache_key.hpp"

#include <fmt/format.h>

#include <iterator>
#include <optional>

namespace hsdp::detail {
namespace {

// Every field of Run and PldOptions is written below. These layouts are this platform's
// (libstdc++ on x86-64); adding a field changes them and stops the build here, so that the
// key is extended with it (or the reason it may be left out is written down).
#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(Run) == 320, "Run changed: extend cache_key(const Run&) with the new field");
static_assert(sizeof(div::PldOptions) == 64,
              "PldOptions changed: extend cache_key(const PldOptions&) with the new field");
#endif

void put(std::string& out, double v) { fmt::format_to(std::back_inserter(out), "{:a} ", v); }
template <typename I>
void put_int(std::string& out, I v) {
  fmt::format_to(std::back_inserter(out), "{} ", v);
}
void put(std::string& out, const std::optional<double>& v) {
  if (v) put(out, *v); else out += "- ";
}
void put(std::string& out, const std::optional<std::int64_t>& v) {
  if (v) put_int(out, *v); else out += "- ";
}
void put(std::string& out, const Schedule& s) {
  put_int(out, s.size());
  for (double v : s.values()) put(out, v);
}

}  // namespace

std::string cache_key(const Run& run, KeyOmits omits) {
  std::string out;
  put_int(out, run.n);
  put_int(out, run.steps);
  put_int(out, run.batch_size);
  put_int(out, static_cast<int>(run.sampling));
  put(out, run.eta);
  put_int(out, run.eta_known);
  put_int(out, static_cast<int>(run.noise));
  if (omits == KeyOmits::noise_std) out += "noise_std:omitted "; else put(out, run.noise_std);
  put(out, run.loss.lipschitz);
  put(out, run.loss.smoothness);
  put(out, run.loss.strong_convexity);
  put_int(out, run.loss.convex);
  put(out, run.diameter);
  put_int(out, static_cast<int>(run.release));
  put_int(out, static_cast<int>(run.adjacency));
  put_int(out, run.drop_last);
  put_int(out, run.order_known);
  put(out, run.index);
  put(out, run.dimension);
  put(out, run.clip);
  put(out, run.lsi_constant);
  put(out, run.pld_interval);
  put(out, run.pld_cells);
  if (run.grid) {
    out += "grid ";
    put(out, run.grid->slack);
    put(out, run.grid->epsilon);
    put(out, run.grid->log_beta);
    put_int(out, run.grid->reason.size());
    out += run.grid->reason;
  } else {
    out += "- ";
  }
  return out;
}

std::string cache_key(const div::PldOptions& o) {
  std::string out;
  put(out, o.interval);
  put_int(out, o.fixed_interval);
  put(out, o.tail_mass);
  put(out, o.truncation_mass);
  put_int(out, o.max_length);
  put_int(out, o.refinement);
  put_int(out, o.block);
  put(out, o.cells);
  return out;
}

}  // namespace hsdp::detail
