// The shared parts of the 1-D audit instance (src/audit/instance.hpp).
#include "instance.hpp"

#include <fmt/format.h>

#include "hsdp/errors.hpp"

namespace hsdp::audit::detail {

bool in_cyclic_batch(const Run& run, std::int64_t index, std::int64_t t) {
  __extension__ using u128 = unsigned __int128;
  const auto n = static_cast<u128>(run.n);
  const u128 start = (static_cast<u128>(t - 1) % n) * static_cast<u128>(run.batch_size) % n;
  const u128 pos = static_cast<u128>(index - 1);
  return (pos + n - start) % n < static_cast<u128>(run.batch_size);
}

std::optional<std::int64_t> record_index(const Run& run) {
  if (run.sampling != Sampling::cyclic) return std::nullopt;
  if (run.index) return run.index;
  if (run.release == Release::random_stop) return 1;
  __extension__ using u128 = unsigned __int128;
  const u128 last = (static_cast<u128>(run.steps) * static_cast<u128>(run.batch_size) - 1) %
                    static_cast<u128>(run.n);
  return static_cast<std::int64_t>(last) + 1;
}

std::int64_t shuffled_batches(const Run& run) { return run.batches_per_epoch(); }

double contraction(const Run& run, std::int64_t t) {
  const double lambda = run.loss.strong_convexity;
  return lambda > 0 ? 1.0 - run.eta.at(t) * lambda : 1.0;
}

void check_contraction(const Run& run) {
  const double lambda = run.loss.strong_convexity;
  if (!(lambda > 0)) return;
  const double eta = run.eta.max();
  if (!(eta * lambda <= 2.0))
    fail(opt("strong_convexity"), lambda,
         fmt::format("<= 2 / max eta = {} for the exact audit (the gradient step of its "
                     "quadratic loss, w -> (1 - eta lambda) w, must be a contraction)",
                     show(2.0 / eta)));
}

}  // namespace hsdp::audit::detail
