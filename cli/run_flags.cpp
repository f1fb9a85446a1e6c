#include "run_flags.hpp"

#include <fmt/format.h>

#include <cmath>

#include "hsdp/errors.hpp"

namespace hsdp::cli {

namespace {

// The built-in example run (journal Fig. 2 setting: L = beta = 1, n = 100, diameter 1,
// eta = 0.05, journal sigma = 3), last iterate released.
void apply_example(RunFlags& f) {
  if (!f.n) f.n = 100;
  if (!f.eta) f.eta = 0.05;
  if (!f.lipschitz) f.lipschitz = 1.0;
  if (!f.smoothness) f.smoothness = 1.0;
  if (std::isinf(f.diameter)) f.diameter = 1.0;
  if (!f.noise_std && !f.sigma) {
    f.sigma = 3.0;
    f.convention = "journal";
  }
}

}  // namespace

void RunFlags::add_to(CLI::App& app) {
  app.add_flag("--example", example,
               "Fill unset run flags with the built-in example (journal Fig. 2: n=100, eta=0.05, "
               "L=1, beta=1, diameter 1, journal sigma 3)");
  app.add_option("--n", n, "Dataset size n (users, for federated runs)");
  app.add_option("--steps", steps, "Number of noisy updates T (default: one pass, n / batch-size)");
  app.add_option("--batch-size", batch_size, "Batch size b (users per round m)")->capture_default_str();
  app.add_option("--sampling", sampling,
                 "Batch policy: full|poisson|fixed|shuffle|cyclic (default: cyclic, or full when "
                 "batch-size = n)");
  app.add_option("--eta", eta, "Step size eta (the base value of --eta-schedule)");
  app.add_option("--eta-schedule", eta_schedule,
                 "Step sizes: constant (eta), inv-sqrt (eta/sqrt(t)), inv-t (eta/t)")
      ->capture_default_str();
  app.add_option("--noise", noise, "Noise distribution: gaussian|laplace")->capture_default_str();
  app.add_option("--noise-std", noise_std,
                 "Std of the noise added to the parameters at each step");
  app.add_option("--sigma", sigma, "The paper's own noise parameter (needs --convention)");
  app.add_option("--convention", convention,
                 "How --sigma maps to parameter space: journal|isit|federated|chourasia|altschuler");
  app.add_option("--noise-multiplier", noise_multiplier,
                 "DP-SGD noise multiplier z: N(0, (z C)^2) added to the sum of the batch's "
                 "clipped gradients, then divided by b (noise std eta z C / b; needs --clip)");
  app.add_option("--clip", clip, "Clipping norm C of the per-example gradients (> 0)");
  app.add_option("--lsi", lsi,
                 "Log-Sobolev constant c > 0 that every law of the iterates satisfies "
                 "(Ent(f^2) <= (2/c) E|grad f|^2; a Gaussian N(m, vI) has c = 1/v); used by langevin Thm 2");
  app.add_option("--alpha", alphas,
                 "Report the RDP curve of every RDP analysis at this order (> 1; repeatable)")
      ->allow_extra_args(false);
  app.add_option("--lipschitz", lipschitz, "Lipschitz constant L of the per-example loss");
  app.add_option("--smoothness", smoothness, "Smoothness beta of the per-example loss");
  app.add_option("--strong-convexity", strong_convexity,
                 "Strong convexity lambda of the per-example loss")->capture_default_str();
  app.add_flag("--non-convex", non_convex, "The loss is not convex");
  app.add_option("--diameter", diameter, "Diameter D of the constraint set (default inf)");
  app.add_option("--release", release, "What is published: last|random-stop|every")->capture_default_str();
  app.add_option("--adjacency", adjacency, "Neighbouring datasets: replace|remove")->capture_default_str();
  app.add_option("--index", index, "Position i (1..n) of the differing record (per-index analyses)");
  app.add_option("--dimension", dimension, "Model dimension d (for utility bounds; 1 for Laplace)");
  auto* e = app.add_option("--epsilon", epsilon, "Report delta at this epsilon");
  auto* d = app.add_option("--delta", delta, "Report epsilon at this delta (default 1e-5)");
  e->excludes(d);
}

Run RunFlags::to_run() const {
  RunFlags f = *this;
  if (f.example) apply_example(f);
  if (!f.n) fail(opt("n"), "(missing)", fmt::format("given: the dataset size, an integer >= 1 (or use {})", error_field("example")));
  Run run;
  run.n = require_range(opt("n"), *f.n, 1, std::int64_t{1} << 53);
  run.batch_size = require_range(opt("batch_size"), f.batch_size, 1, run.n);
  if (f.sampling) {
    run.sampling = pick_choice<Sampling>(opt("sampling"), *f.sampling,
                                  {{"full", Sampling::full}, {"poisson", Sampling::poisson},
                                   {"fixed", Sampling::fixed}, {"shuffle", Sampling::shuffle},
                                   {"cyclic", Sampling::cyclic}});
  } else {
    run.sampling = run.batch_size == run.n ? Sampling::full : Sampling::cyclic;
  }
  run.steps = f.steps ? require_range(opt("steps"), *f.steps, 1, std::int64_t{1} << 53)
                      : std::max<std::int64_t>(1, run.n / run.batch_size);
  if (!f.eta) fail(opt("eta"), "(missing)", "given: the step size, finite and > 0");
  require_positive(opt("eta"), *f.eta);
  const auto shape = pick_choice<ScheduleShape>(opt("eta_schedule"), f.eta_schedule,
                                         {{"constant", ScheduleShape::constant},
                                          {"inv-sqrt", ScheduleShape::inv_sqrt},
                                          {"inv-t", ScheduleShape::inv_t}});
  run.eta = make_schedule(shape, *f.eta, run.steps);
  run.noise = pick_choice<NoiseKind>(opt("noise"), f.noise,
                              {{"gaussian", NoiseKind::gaussian}, {"laplace", NoiseKind::laplace}});
  if (f.noise_std && f.sigma)
    fail(opt("sigma"), *f.sigma, fmt::format("absent when {} is given (give one of the two)", error_field("noise_std")));
  if (f.noise_multiplier && (f.noise_std || f.sigma))
    fail(opt("noise_multiplier"), *f.noise_multiplier,
         fmt::format("absent when {} or {} is given (give one noise parameter)", error_field("noise_std"),
                     error_field("sigma")));
  if (f.clip) run.clip = require_positive(opt("clip"), *f.clip);
  if (f.lsi) run.lsi_constant = require_positive(opt("lsi"), *f.lsi);
  if (f.noise_multiplier) {
    require_positive(opt("noise_multiplier"), *f.noise_multiplier);
    if (!f.clip) fail(opt("clip"), "(missing)", fmt::format("given with {}: the clipping norm C > 0", error_field("noise_multiplier")));
    if (f.convention) fail(opt("convention"), *f.convention, fmt::format("used together with {}", error_field("sigma")));
    std::vector<double> s(run.eta.size());
    for (std::size_t t = 0; t < s.size(); ++t)
      s[t] = noise_std_from_multiplier(*f.noise_multiplier, *f.clip, run.eta.values()[t],
                                       run.batch_size);
    run.noise_std = s.size() == 1 ? Schedule(s[0]) : Schedule(std::move(s));
  } else if (f.noise_std) {
    require_positive(opt("noise_std"), *f.noise_std);
    run.noise_std = Schedule(*f.noise_std);
  } else if (f.sigma) {
    if (!f.convention)
      fail(opt("convention"), "(missing)",
           fmt::format("given with {}: journal|isit|federated|chourasia|altschuler", error_field("sigma")));
    require_positive(opt("sigma"), *f.sigma);
    const Convention c = parse_convention(*f.convention, opt("convention"));
    if (run.eta.is_constant()) {
      run.noise_std = Schedule(noise_std_from_sigma(c, *f.sigma, run.eta.at(1), run.batch_size, run.noise));
    } else {
      std::vector<double> s(run.eta.size());
      for (std::size_t t = 0; t < s.size(); ++t)
        s[t] = noise_std_from_sigma(c, *f.sigma, run.eta.values()[t], run.batch_size, run.noise);
      run.noise_std = Schedule(std::move(s));
    }
  } else {
    fail(opt("noise_std"), "(missing)",
         fmt::format("given (> 0), or {} with {}, or {} with {}", error_field("sigma"),
                     error_field("convention"), error_field("noise_multiplier"), error_field("clip")));
  }
  if (f.convention && !f.sigma)
    fail(opt("convention"), *f.convention, fmt::format("used together with {}", error_field("sigma")));
  run.loss.lipschitz = f.lipschitz;
  run.loss.smoothness = f.smoothness;
  run.loss.strong_convexity = f.strong_convexity;
  run.loss.convex = !f.non_convex;
  run.diameter = f.diameter;
  run.release = pick_choice<Release>(opt("release"), f.release,
                              {{"last", Release::last}, {"random-stop", Release::random_stop},
                               {"every", Release::every}});
  run.adjacency = pick_choice<Adjacency>(opt("adjacency"), f.adjacency,
                                  {{"replace", Adjacency::replace}, {"remove", Adjacency::remove}});
  run.index = f.index;
  run.dimension = f.dimension;
  run.validate();
  return run;
}

Query RunFlags::to_query() const {
  for (const double a : alphas)
    if (std::isnan(a) || !(a > 1.0)) fail(opt("alphas"), a, "> 1");
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

}  // namespace hsdp::cli
