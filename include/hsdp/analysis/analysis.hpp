// One analysis = one paper's theorem family. Each answers two questions about a Run:
// "do my assumptions hold, and if not, why?" and "what is my guarantee?".
// "Not applicable" is a result with a reason, never an error and never a number.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsdp/run.hpp"

namespace hsdp {

/// What the caller asks: delta at a given epsilon, or epsilon at a given delta.
struct Query {
  std::optional<double> epsilon;  ///< eps >= 0: report delta(eps)
  std::optional<double> delta;    ///< delta in (0, 1): report eps(delta)
  /// Orders alpha > 1 at which RDP analyses also report their RDP curve (`--alpha`).
  std::vector<double> alphas;
  static Query at_epsilon(double epsilon);  ///< validates epsilon >= 0
  static Query at_delta(double delta);      ///< validates 0 < delta < 1
};

/// upper: a guarantee (can be "best", used by calibrate). lower: what no analysis can beat.
/// heuristic: an estimate that is NOT a guarantee (printed and in JSON, never best, never
/// calibrated for). comparison: a published upper bound that hsdp prints next to the others
/// but does not certify, because its derivation is not reproduced in docs/ (rounded up like
/// an upper bound; never best, never calibrated for).
enum class BoundKind { upper, lower, heuristic, comparison };
/// "upper", "lower", "heuristic" or "comparison".
std::string_view to_string(BoundKind kind);

/// A named side value of an analysis (a closed form next to the exact sum, a regret
/// bound, the worst index, ...). Shown in the table and in JSON under "details".
struct Detail {
  std::string name;
  double value;
};

/// One point of an RDP curve: (alpha, eps_alpha).
struct RdpPoint {
  double alpha;
  double epsilon;
};

struct AnalysisResult {
  std::string name;
  std::string citation;
  bool applicable = false;
  std::string reason;                   ///< why not applicable (empty when applicable)
  BoundKind kind = BoundKind::upper;
  std::optional<double> epsilon;        ///< set when applicable (may be +inf)
  std::optional<double> delta;          ///< set when applicable
  std::optional<std::int64_t> index;    ///< the record position the guarantee refers to
  std::vector<Detail> details;
  std::string note;                     ///< e.g. why epsilon is infinite
  std::vector<RdpPoint> rdp;            ///< the RDP curve at the query's alphas (RDP analyses)
  Adjacency adjacency = Adjacency::replace;  ///< the neighbouring relation of the numbers (the run's)
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  /// Stable name, part of the CLI contract (e.g. "contraction-per-index").
  virtual std::string_view name() const = 0;
  /// Paper, theorem and equation.
  virtual std::string_view citation() const = 0;
  virtual BoundKind kind() const { return BoundKind::upper; }

  /// nullopt when the analysis applies to `run`, otherwise the reason (a sentence
  /// naming the violated assumption, without the "not applicable: " prefix). Callers ask
  /// not_applicable(), which adds the requirements every analysis shares.
  virtual std::optional<std::string> check(const Run& run) const = 0;

  /// False when the guarantee reads the step sizes only through the noise relative to the
  /// step, noise_std_t / eta_t (e.g. a DP-SGD noise multiplier), so that it holds for a run
  /// whose step size is unknown (Run::eta_known). Default true: an analysis that reads eta
  /// against L, beta, lambda or the diameter needs it.
  virtual bool reads_eta() const { return true; }

  /// True when the analysis derives the cost of noise drawn on a grid (Run::grid,
  /// docs/security.md): it adds grid->slack s_t to each step's shift, sensitivity and image
  /// diameter, and evaluate() charges grid->epsilon and grid->log_beta. Default false: on a gridded run an
  /// upper, lower or comparison bound is "not applicable" (a heuristic is shown as is).
  virtual bool charges_grid() const { return false; }

  /// The reason the analysis does not apply to `run` (nullopt when it does): "needs the step
  /// size eta" for a run without one when reads_eta(), a gridded run whose cost it does not
  /// derive (charges_grid()), else check().
  std::optional<std::string> not_applicable(const Run& run) const;

  /// log delta(eps) for eps >= 0 on an applicable run; -inf means delta = 0. Must be
  /// non-increasing in eps. Values above 0 (delta > 1) are allowed and capped by evaluate().
  virtual double log_delta(const Run& run, double epsilon) const = 0;

  /// Smallest eps with delta(eps) <= delta. The default inverts log_delta with the
  /// monotone root finder and returns the conservative (upper) end of the bracket;
  /// +inf when no eps up to 1e4 meets the target.
  virtual double epsilon(const Run& run, double delta) const;

  /// The record position the guarantee refers to (per-index analyses), if any.
  virtual std::optional<std::int64_t> index(const Run&) const { return std::nullopt; }

  /// RDP epsilon at order alpha for analyses stated in Rényi DP; nullopt for the others.
  virtual std::optional<double> rdp_at(const Run&, double /*alpha*/) const { return std::nullopt; }

  /// A sentence for the result's note on an applicable run (e.g. which theorem of a
  /// family gave the value). Default none.
  virtual std::string note(const Run&) const { return {}; }

  /// Extra named values for this query (closed forms, utility bounds). Default none.
  virtual std::vector<Detail> details(const Run&, const Query&) const { return {}; }

  /// check + compute + conservative rounding, packaged as a result. A run that passes
  /// check() but whose numbers leave the range the analysis computes in (an InvalidArgument
  /// from inside it) is "not applicable" with that reason: never a number, never an error
  /// naming an internal parameter. An invalid query throws InvalidArgument.
  AnalysisResult evaluate(const Run& run, const Query& query) const;

 private:
  void compute(const Run& run, const Query& query, AnalysisResult& result) const;
};

using AnalysisPtr = std::shared_ptr<const Analysis>;

/// Every analysis hsdp knows, in report order.
const std::vector<AnalysisPtr>& all_analyses();
/// The analysis with this name, or throws InvalidArgument naming `parameter` (the field that
/// stated the name) and listing the known names.
AnalysisPtr find_analysis(std::string_view name, const Param& parameter = opt("analyses"));

/// Rounds a reported epsilon or delta up: multiplies by (1 + 1e-9), which covers the
/// relative evaluation error of the special functions (<= 1e-10), then rounds up to
/// 10 significant digits. 0 and +inf are kept. Never called on NaN (asserts).
double round_up(double value);

/// The delta an UPPER bound reports from its log: 1 when log delta >= 0 (vacuous), 0 at
/// -inf, the smallest normal double when delta is below it (num::exp_upper: exp() would
/// lose bits, then underflow), otherwise exp(log delta) rounded up (round_up). NaN stays
/// NaN: the caller decides how to fail.
double delta_upper(double log_delta);

/// True when an upper bound with this log delta certifies `delta`: delta_upper(log_delta)
/// <= delta, so the comparison is made on the value that would be reported.
bool log_delta_meets(double log_delta, double delta);

}  // namespace hsdp
