#include "hsdp/run_spec.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "hsdp/divergence/pld.hpp"

namespace hsdp {

std::string_view to_string(NoiseUnit u) {
  switch (u) {
    case NoiseUnit::std: return "noise_std";
    case NoiseUnit::sigma: return "sigma";
    case NoiseUnit::multiplier: return "noise_multiplier";
  }
  return "?";
}

Schedule noise_std_schedule(const NoiseParameter& noise, const Schedule& eta,
                            std::int64_t batch_size, NoiseKind kind,
                            const std::optional<double>& clip) {
  const Param stated = opt(to_string(noise.unit));
  require_positive(stated, noise.value);
  if (noise.unit == NoiseUnit::std) return Schedule(noise.value);
  if (noise.unit == NoiseUnit::multiplier && !clip)
    fail(opt("clip"), "(missing)", "given with a noise multiplier: the clipping norm C > 0");
  // sigma and multiplier units scale with each step's eta (and with b). The std must come out
  // finite and > 0: the error names the value the user stated, not the std it became.
  auto at = [&](double eta_t) {
    const double std = noise.unit == NoiseUnit::sigma
                           ? noise_std_from_sigma(noise.convention, noise.value, eta_t, batch_size, kind)
                           : noise_std_from_multiplier(noise.value, *clip, eta_t, batch_size);
    if (!std::isfinite(std) || !(std > 0))
      fail(stated, noise.value,
           fmt::format("such that the noise std per step is finite and > 0 (with eta = {} it is {})", show(eta_t),
                       show(std)));
    return std;
  };
  if (eta.is_constant()) return Schedule(at(eta.at(1)));
  std::vector<double> s(eta.size());
  for (std::size_t t = 0; t < s.size(); ++t) s[t] = at(eta.values()[t]);
  return Schedule(std::move(s));
}

Schedule noise_schedule(const Run& run, const NoiseParameter& noise) {
  return noise_std_schedule(noise, run.eta, run.batch_size, run.noise, run.clip);
}

namespace {

constexpr std::int64_t kMaxCount = std::int64_t{1} << 53;

// The built-in example run (journal Fig. 2 setting: L = beta = 1, n = 100, diameter 1,
// eta = 0.05, journal sigma = 3), last iterate released.
RunSpec with_example(RunSpec f) {
  if (!f.n) f.n = 100;
  if (!f.eta) f.eta = 0.05;
  if (!f.lipschitz) f.lipschitz = 1.0;
  if (!f.smoothness) f.smoothness = 1.0;
  if (!f.diameter) f.diameter = 1.0;  // a stated one (inf: unconstrained) is the user's
  // The example's noise only when the user states none (a stated convention belongs to a
  // stated sigma: resolve() checks it, never overwritten).
  if (!f.noise_std && !f.sigma && !f.noise_multiplier && !f.convention) {
    f.sigma = 3.0;
    f.convention = "journal";
  }
  return f;
}

// How each field reads and writes its value as text (to_map / from_map). The order of
// this table is the order of to_map(), so of the command lines built from it.
enum class Kind { switch_, integer, real, word, boolean };
struct Binding {
  RunField field;
  Kind kind;
  bool RunSpec::*flag = nullptr;
  std::optional<std::int64_t> RunSpec::*integer = nullptr;
  std::optional<double> RunSpec::*real = nullptr;
  std::optional<std::string> RunSpec::*word = nullptr;
  std::optional<bool> RunSpec::*boolean = nullptr;
};

Binding sw(RunField f, bool RunSpec::*m) {
  f.type = RunField::Type::switch_;
  return {f, Kind::switch_, m};
}
Binding in(RunField f, std::optional<std::int64_t> RunSpec::*m) {
  f.type = RunField::Type::integer;
  return {f, Kind::integer, nullptr, m};
}
Binding re(RunField f, std::optional<double> RunSpec::*m) {
  f.type = RunField::Type::real;
  return {f, Kind::real, nullptr, nullptr, m};
}
Binding wd(RunField f, std::optional<std::string> RunSpec::*m) {
  f.type = RunField::Type::word;
  return {f, Kind::word, nullptr, nullptr, nullptr, m};
}
Binding bo(RunField f, std::optional<bool> RunSpec::*m) {
  f.type = RunField::Type::boolean;
  return {f, Kind::boolean, nullptr, nullptr, nullptr, nullptr, m};
}

const std::vector<Binding>& bindings() {
  static const std::vector<Binding> table = {
      sw({"example", "Fill what is not stated with the built-in example (journal Fig. 2: n=100, "
                     "eta=0.05, L=1, beta=1, diameter 1, journal sigma 3)"},
         &RunSpec::example),
      in({"n", "Dataset size n (users, for federated runs)"}, &RunSpec::n),
      in({"steps", "Number of noisy updates T (default: one pass, n / batch-size)"}, &RunSpec::steps),
      in({"batch_size", "Batch size b (users per round m); default 1"}, &RunSpec::batch_size),
      wd({"sampling", "Batch policy: full|poisson|fixed|shuffle|cyclic (default: cyclic, or full "
                      "when batch-size = n)"},
         &RunSpec::sampling),
      re({"eta", "Step size eta (the base value of eta_schedule); unstated: the analyses that need it are skipped"}, &RunSpec::eta),
      wd({"eta_schedule", "Step sizes: constant (eta), inv-sqrt (eta/sqrt(t)), inv-t (eta/t)"},
         &RunSpec::eta_schedule),
      wd({"noise", "Noise distribution: gaussian|laplace (default gaussian)"}, &RunSpec::noise),
      re({"sigma", "The paper's own noise parameter (needs convention)"}, &RunSpec::sigma),
      wd({"convention", "How sigma maps to parameter space: journal|isit|federated|chourasia|"
                        "altschuler"},
         &RunSpec::convention),
      re({"noise_std", "Std of the noise added to the parameters at each step"}, &RunSpec::noise_std),
      re({"noise_multiplier", "DP-SGD noise multiplier z: N(0, (z C)^2) added to the sum of the "
                              "batch's clipped gradients, then divided by b (needs clip)"},
         &RunSpec::noise_multiplier),
      re({"lipschitz", "Lipschitz constant L of the per-example loss"}, &RunSpec::lipschitz),
      re({"smoothness", "Smoothness beta of the per-example loss"}, &RunSpec::smoothness),
      re({"strong_convexity", "Strong convexity lambda of the per-example loss (default 0)"},
         &RunSpec::strong_convexity),
      sw({"non_convex", "The loss is not convex"}, &RunSpec::non_convex),
      re({"diameter", "Diameter D of the constraint set (default inf)"}, &RunSpec::diameter),
      re({"clip", "Clipping norm C of the per-example gradients (> 0)"}, &RunSpec::clip),
      re({"lsi", "Log-Sobolev constant c > 0 that every law of the iterates satisfies (langevin "
                 "Thm 2)"},
         &RunSpec::lsi),
      in({"dimension", "Model dimension d (for utility bounds; 1 for Laplace)"}, &RunSpec::dimension),
      in({"index", "Position i (1..n) of the differing record (per-index analyses)"}, &RunSpec::index),
      wd({"release", "What is published: last|random-stop|every (default last)"}, &RunSpec::release),
      wd({"adjacency", "Neighbouring datasets: replace|remove (default replace)"}, &RunSpec::adjacency),
      bo({"drop_last", "Shuffled batches: true drops the n mod b records left after the last full "
                       "batch of each epoch; false keeps them as a smaller last batch (PyTorch's "
                       "DataLoader default); default true"},
         &RunSpec::drop_last),
      bo({"order_known", "The batch order is public (an order log or seed published with the model): "
                         "shuffled batches are certified at their worst position, Poisson and "
                         "fixed-size batches without amplification; default false"},
         &RunSpec::order_known),
      re({"pld_interval", "A fixed grid spacing of the privacy losses in the PLD analyses (composition-pld, "
                          "shifted-interpolation), in [1e-6, 0.5]; default: none, the automatic grid (its "
                          "spacing is the std of one step's loss divided by pld-cells). Smaller is tighter "
                          "and slower (docs/pld.md)"},
         &RunSpec::pld_interval),
      re({"pld_cells", "Grid cells per std of one step's privacy loss, in [1, 1000]; default 16: the "
                       "automatic grid's spacing, or with pld-interval the aim of its automatic "
                       "refinement. Larger is tighter and slower (docs/pld.md)"},
         &RunSpec::pld_cells),
      re({"grid_slack", "Noise drawn on a grid (hsdp train's runs; docs/security.md): the extra distance per "
                        "step relative to the noise std that the roundings add (>= 0)"},
         &RunSpec::grid_slack),
      re({"grid_epsilon", "Noise drawn on a grid: the samplers' distance to the rounded continuous noise, "
                          "added to epsilon (>= 0; needs grid-slack)"},
         &RunSpec::grid_epsilon),
      re({"grid_log_beta", "Noise drawn on a grid: the log of the probability outside which that distance "
                           "holds, charged to delta (<= 0, or -inf; needs grid-slack)"},
         &RunSpec::grid_log_beta),
  };
  return table;
}

}  // namespace

std::span<const RunField> RunSpec::fields() {
  static const std::vector<RunField> out = [] {
    std::vector<RunField> f;
    for (const auto& b : bindings()) f.push_back(b.field);
    return f;
  }();
  return out;
}

FieldValues RunSpec::to_map() const {
  FieldValues out;
  for (const auto& b : bindings()) {
    const std::string name(b.field.name);
    switch (b.kind) {
      case Kind::switch_:
        if (this->*b.flag) out.emplace_back(name, "");
        break;
      case Kind::integer:
        if (this->*b.integer) out.emplace_back(name, std::to_string(*(this->*b.integer)));
        break;
      case Kind::real:
        if (this->*b.real) out.emplace_back(name, show(*(this->*b.real)));
        break;
      case Kind::word:
        if (this->*b.word) out.emplace_back(name, *(this->*b.word));
        break;
      case Kind::boolean:
        if (this->*b.boolean) out.emplace_back(name, *(this->*b.boolean) ? "true" : "false");
        break;
    }
  }
  return out;
}

void RunSpec::set(std::string_view field, std::string_view text) {
  const Binding* b = nullptr;
  for (const auto& candidate : bindings())
    if (candidate.field.name == field) b = &candidate;
  if (!b) fail("run field", field, "a field of a run (RunSpec::fields())");
  switch (b->kind) {
    case Kind::switch_:
      if (!text.empty()) fail(opt(field), text, "empty (a switch)");
      this->*b->flag = true;
      break;
    case Kind::integer: this->*b->integer = parse_integer(opt(field), text); break;
    case Kind::real: this->*b->real = parse_real(opt(field), text); break;
    case Kind::word:
      if (text.empty()) fail(opt(field), "(empty)", "a value");
      this->*b->word = std::string(text);
      break;
    case Kind::boolean:
      if (text == "true") this->*b->boolean = true;
      else if (text == "false") this->*b->boolean = false;
      else fail(opt(field), text.empty() ? std::string_view("(empty)") : text, "true or false");
      break;
  }
}

RunSpec RunSpec::from_map(const FieldValues& values) {
  RunSpec spec;
  for (const auto& [field, text] : values) spec.set(field, text);
  return spec;
}

RunSpec RunSpec::stating(const Run& run, const std::optional<NoiseParameter>& noise) {
  RunSpec s;
  s.n = run.n;
  s.steps = run.steps;
  s.batch_size = run.batch_size;
  s.sampling = std::string(to_string(run.sampling));
  if (run.eta_known) s.eta = run.eta.at(1);
  if (!run.eta.is_constant()) {
    // make_schedule's own values for each shape: an exact match names the shape.
    bool found = false;
    for (const auto shape : {ScheduleShape::inv_sqrt, ScheduleShape::inv_t}) {
      if (make_schedule(shape, run.eta.at(1), run.steps).values() != run.eta.values()) continue;
      s.eta_schedule = std::string(to_string(shape));
      found = true;
    }
    if (!found) fail("eta", "a per-step schedule", "constant, eta/sqrt(t) or eta/t to be stated");
  }
  s.noise = std::string(to_string(run.noise));
  if (noise && noise->unit == NoiseUnit::sigma) {
    s.sigma = noise->value;
    s.convention = std::string(to_string(noise->convention));
  } else if (noise && noise->unit == NoiseUnit::multiplier) {
    s.noise_multiplier = noise->value;
  } else if (!run.eta_known) {
    // The std per unit of step size is a journal sigma (std = eta sigma; Laplace: sqrt(2) eta v).
    s.sigma = sigma_from_noise_std(Convention::journal, run.noise_std.at(1), 1.0, run.batch_size, run.noise);
    s.convention = std::string(to_string(Convention::journal));
  } else {
    if (!run.noise_std.is_constant())
      fail("noise_std", "a per-step schedule", "constant to be stated as a noise std");
    s.noise_std = run.noise_std.at(1);
  }
  s.lipschitz = run.loss.lipschitz;
  s.smoothness = run.loss.smoothness;
  if (run.loss.strong_convexity > 0) s.strong_convexity = run.loss.strong_convexity;
  s.non_convex = !run.loss.convex;
  if (std::isfinite(run.diameter)) s.diameter = run.diameter;
  s.clip = run.clip;
  s.lsi = run.lsi_constant;
  s.dimension = run.dimension;
  s.index = run.index;
  s.release = std::string(to_string(run.release));
  if (run.adjacency != Adjacency::replace) s.adjacency = std::string(to_string(run.adjacency));
  if (!run.drop_last) s.drop_last = false;
  if (run.order_known) s.order_known = true;
  s.pld_interval = run.pld_interval;
  s.pld_cells = run.pld_cells;
  if (run.grid) {
    s.grid_slack = run.grid->slack;
    s.grid_epsilon = run.grid->epsilon;
    if (std::isfinite(run.grid->log_beta) || run.grid->log_beta > 0) s.grid_log_beta = run.grid->log_beta;
  }
  return s;
}

NoiseParameter RunSpec::noise_statement() const {
  if (noise_multiplier) return {NoiseUnit::multiplier, Convention::journal, *noise_multiplier};
  if (sigma)
    return {NoiseUnit::sigma, convention ? parse_convention(*convention) : Convention::journal,
            *sigma};
  return {NoiseUnit::std, Convention::journal, noise_std.value_or(1.0)};
}

Run RunSpec::resolve() const {
  const RunSpec f = example ? with_example(*this) : *this;
  if (!f.n)
    fail(opt("n"), "(missing)",
         fmt::format("given: the dataset size, an integer >= 1 (or use {})", error_field("example")));
  Run run;
  run.n = require_range(opt("n"), *f.n, 1, kMaxCount);
  run.batch_size = require_range(opt("batch_size"), f.batch_size.value_or(1), 1, run.n);
  run.sampling = f.sampling ? parse_name<Sampling>(*f.sampling, opt("sampling"))
                 : run.batch_size == run.n ? Sampling::full
                                           : Sampling::cyclic;
  run.steps = f.steps ? require_range(opt("steps"), *f.steps, 1, kMaxCount)
                      : std::max<std::int64_t>(1, run.n / run.batch_size);
  const auto shape = parse_name<ScheduleShape>(f.eta_schedule.value_or("constant"), opt("eta_schedule"));
  if (f.eta) {
    run.eta = make_schedule(shape, require_positive(opt("eta"), *f.eta), run.steps);
  } else {
    // The step size unknown (a DP-SGD user states the noise multiplier, not eta): the run is
    // accounted in units of eta (Run::eta_known) by the analyses that read eta only through
    // the noise relative to the step; the noise must then be stated relative to the step.
    if (f.eta_schedule)
      fail(opt("eta"), "(missing)", fmt::format("given with {}: its base value", error_field("eta_schedule")));
    run.eta = Schedule(1.0);
    run.eta_known = false;
  }
  run.noise = parse_name<NoiseKind>(f.noise.value_or("gaussian"), opt("noise"));
  if (f.convention) parse_convention(*f.convention, opt("convention"));  // an unknown name, first
  if (f.convention && !f.sigma && !f.noise_multiplier)
    fail(opt("convention"), *f.convention, fmt::format("used together with {}", error_field("sigma")));

  // The noise statement: exactly one of noise_std, sigma (with convention), noise_multiplier
  // (with clip); each checked where it is stated, then translated by noise_std_schedule.
  if (f.noise_std && f.sigma)
    fail(opt("sigma"), *f.sigma,
         fmt::format("absent when {} is given (give one of the two)", error_field("noise_std")));
  if (f.noise_multiplier && (f.noise_std || f.sigma))
    fail(opt("noise_multiplier"), *f.noise_multiplier,
         fmt::format("absent when {} or {} is given (give one noise parameter)",
                     error_field("noise_std"), error_field("sigma")));
  if (f.clip) run.clip = require_positive(opt("clip"), *f.clip);
  if (f.lsi) run.lsi_constant = require_positive(opt("lsi"), *f.lsi);
  NoiseParameter noise;
  if (f.noise_multiplier) {
    require_positive(opt("noise_multiplier"), *f.noise_multiplier);
    if (!f.clip)
      fail(opt("clip"), "(missing)",
           fmt::format("given with {}: the clipping norm C > 0", error_field("noise_multiplier")));
    if (f.convention)
      fail(opt("convention"), *f.convention, fmt::format("used together with {}", error_field("sigma")));
    noise = {NoiseUnit::multiplier, Convention::journal, *f.noise_multiplier};
  } else if (f.noise_std) {
    noise = {NoiseUnit::std, Convention::journal, require_positive(opt("noise_std"), *f.noise_std)};
  } else if (f.sigma) {
    if (!f.convention)
      fail(opt("convention"), "(missing)",
           fmt::format("given with {}: journal|isit|federated|chourasia|altschuler", error_field("sigma")));
    require_positive(opt("sigma"), *f.sigma);
    noise = {NoiseUnit::sigma, parse_convention(*f.convention, opt("convention")), *f.sigma};
  } else {
    fail(opt("noise_std"), "(missing)",
         fmt::format("given (> 0), or {} with {}, or {} with {}", error_field("sigma"),
                     error_field("convention"), error_field("noise_multiplier"), error_field("clip")));
  }
  // A std in parameter space (noise_std, or chourasia's sqrt(2 eta) sigma) says nothing about
  // the noise relative to the gradient step without the step size.
  if (!run.eta_known &&
      (noise.unit == NoiseUnit::std || (noise.unit == NoiseUnit::sigma && noise.convention == Convention::chourasia)))
    fail(opt("eta"), "(missing)",
         fmt::format("given with {}: the step size, finite and > 0 (without it only a noise stated relative "
                     "to the step is accounted: {} with {}, or {} in the journal, isit, federated or "
                     "altschuler convention)",
                     noise.unit == NoiseUnit::std ? error_field("noise_std") : error_field("convention", "chourasia"),
                     error_field("noise_multiplier"), error_field("clip"), error_field("sigma")));
  run.noise_std = noise_schedule(run, noise);

  // The stated loss class and domain, checked here so that the error names the field as the
  // user stated it (Run::validate, below, names the Run's own parameters).
  if (f.lipschitz) require_positive(opt("lipschitz"), *f.lipschitz);
  if (f.smoothness) require_positive(opt("smoothness"), *f.smoothness);
  if (f.strong_convexity) require_nonnegative(opt("strong_convexity"), *f.strong_convexity);
  if (f.diameter) require_positive_or_inf(opt("diameter"), *f.diameter);
  if (f.dimension) require_range(opt("dimension"), *f.dimension, 1, kMaxCount);
  if (f.index) require_range(opt("index"), *f.index, 1, run.n);
  if (f.strong_convexity && *f.strong_convexity > 0 && f.non_convex)
    fail(opt("strong_convexity"), *f.strong_convexity, fmt::format("0 with {}", error_field("non_convex")));
  if (f.strong_convexity && f.smoothness && *f.strong_convexity > *f.smoothness)
    fail(opt("strong_convexity"), *f.strong_convexity,
         fmt::format("<= {} = {} (lambda <= beta for any loss)", error_field("smoothness"), show(*f.smoothness)));
  if (run.sampling == Sampling::full && run.batch_size != run.n)
    fail(opt("batch_size"), std::to_string(run.batch_size),
         fmt::format("equal to {} = {} for {}", error_field("n"), run.n, error_field("sampling", "full")));
  run.loss.lipschitz = f.lipschitz;
  run.loss.smoothness = f.smoothness;
  run.loss.strong_convexity = f.strong_convexity.value_or(0.0);
  run.loss.convex = !f.non_convex;
  run.diameter = f.diameter.value_or(std::numeric_limits<double>::infinity());
  run.release = parse_name<Release>(f.release.value_or("last"), opt("release"));
  run.adjacency = parse_name<Adjacency>(f.adjacency.value_or("replace"), opt("adjacency"));
  run.index = f.index;
  run.dimension = f.dimension;
  if (f.drop_last && !*f.drop_last && run.sampling != Sampling::shuffle)
    fail(opt("drop_last"), "false",
         fmt::format("stated only with {} (only a shuffled epoch leaves a partial last batch; "
                     "sampling = {})",
                     error_field("sampling", "shuffle"), to_string(run.sampling)));
  // drop_last = true (the default) is accepted with any order: a run's JSON states it for every
  // run (hsdp.Run(**report.run) rebuilds the run); false is refused above.
  run.drop_last = f.drop_last.value_or(true);
  run.order_known = f.order_known.value_or(false);
  // The PLD grid: checked with div::validate's ranges, named as the user stated them.
  if (f.pld_interval || f.pld_cells) {
    div::PldOptions grid;
    grid.fixed_interval = f.pld_interval.has_value();  // a stated spacing is a fixed grid
    if (f.pld_interval) grid.interval = *f.pld_interval;
    if (f.pld_cells) grid.cells = *f.pld_cells;
    div::validate(grid, [](std::string_view member) { return opt(fmt::format("pld_{}", member)); });
  }
  run.pld_interval = f.pld_interval;
  run.pld_cells = f.pld_cells;
  if (f.grid_slack || f.grid_epsilon || f.grid_log_beta) {
    if (!f.grid_slack)
      fail(opt(f.grid_epsilon ? "grid_epsilon" : "grid_log_beta"), f.grid_epsilon ? *f.grid_epsilon : *f.grid_log_beta,
           fmt::format("stated with {}", error_field("grid_slack")));
    require_nonnegative(opt("grid_slack"), *f.grid_slack);
    if (f.grid_epsilon) require_nonnegative(opt("grid_epsilon"), *f.grid_epsilon);
    if (f.grid_log_beta && (std::isnan(*f.grid_log_beta) || *f.grid_log_beta > 0))
      fail(opt("grid_log_beta"), *f.grid_log_beta, "<= 0 (or -inf)");
    run.grid = NoiseGrid{*f.grid_slack, f.grid_epsilon.value_or(0.0),
                         f.grid_log_beta.value_or(-std::numeric_limits<double>::infinity()), {}};
  }
  run.validate();
  return run;
}

Query stated_query(const std::optional<double>& epsilon, const std::optional<double>& delta,
                   const std::vector<double>& alphas) {
  for (std::size_t i = 0; i < alphas.size(); ++i) {
    if (std::isnan(alphas[i]) || !(alphas[i] > 1.0)) fail(opt("alphas"), alphas[i], "> 1");
    for (std::size_t j = 0; j < i; ++j)
      if (alphas[j] == alphas[i]) fail(opt("alphas"), alphas[i], "each order given once (it is given twice)");
  }
  Query q;
  if (epsilon) {
    q = Query::at_epsilon(require_nonnegative(opt("epsilon"), *epsilon));
  } else if (delta) {
    require_open(opt("delta"), *delta, 0.0, 1.0);
    q = Query::at_delta(*delta);
  } else {
    q = Query::at_delta(1e-5);
  }
  q.alphas = alphas;
  return q;
}

}  // namespace hsdp
