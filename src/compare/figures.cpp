// Presets that reproduce the source papers' figures at their printed parameters
// (`hsdp compare --figure NAME`). The choices where a caption leaves something open are
// listed in docs/compare.md; the parameters are those of tests/test_figures.cpp,
// tests/test_federated.cpp, tests/test_langevin.cpp and tests/test_shifted_renyi.cpp.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "hsdp/compare.hpp"
#include "hsdp/errors.hpp"

namespace hsdp {
namespace {

// Evenly spaced epsilons (decimal values, as sweep_points writes them).
std::vector<double> linspace(double from, double to, int points) {
  return sweep_points(CompareAxis::epsilon, from, to, points, false);
}

// Projected noisy SGD with batch 1 over n records in one cyclic pass, journal/isit
// convention (noise std eta * sigma in parameter space, Algorithm 2 / isit Alg. 1).
Run pnsgd(std::int64_t n, double eta, double sigma, double L, double beta, double rho, double D,
          Release release, std::optional<std::int64_t> index = std::nullopt) {
  Run run;
  run.n = n;
  run.steps = n;
  run.batch_size = 1;
  run.sampling = Sampling::cyclic;
  run.eta = Schedule(eta);
  run.noise_std = Schedule(noise_std_from_sigma(Convention::journal, sigma, eta, 1));
  run.loss.lipschitz = L;
  run.loss.smoothness = beta;
  run.loss.strong_convexity = rho;
  run.diameter = D;
  run.release = release;
  run.index = index;
  run.validate();
  return run;
}

CompareVariant fixed(std::string label, Run run, std::vector<std::string> analyses,
                     std::optional<std::string> detail = std::nullopt, std::string detail_label = {}) {
  CompareVariant v;
  v.label = std::move(label);
  v.run_at = [run](double) { return run; };
  for (const auto& a : analyses) v.analyses.push_back(find_analysis(a));
  v.detail = std::move(detail);
  v.detail_label = std::move(detail_label);
  return v;
}

// journal (Asoodeh, Diaz, Calmon 2021) Fig. 2: delta vs eps of randomly stopped PNSGD,
// Cor. 1 (= Thm 5 (17), max over i per ERRATA 1) against [53, Thm 26] converted by (22)
// and (23); L = 1, beta = 1, n = 100, eta and sigma varied (diameter 1, as Cor. 1 states).
CompareSpec journal_fig2(int points) {
  CompareSpec s;
  s.title = "journal Fig. 2: randomly stopped PNSGD, Cor. 1 vs [53, Thm 26] via (22), (23)";
  s.axis = CompareAxis::epsilon;
  s.xs = linspace(0.1, 6.0, points > 0 ? points : 60);
  for (double sigma : {1.0, 3.0}) {
    for (double eta : {0.05, 0.1})
      s.variants.push_back(fixed(fmt::format("eta={}, sigma={}", eta, sigma),
                                 pnsgd(100, eta, sigma, 1, 1, 0, 1, Release::random_stop),
                                 {"contraction-random-stop"}));
    // [53] does not depend on eta.
    const Run r = pnsgd(100, 0.05, sigma, 1, 1, 0, 1, Release::random_stop);
    s.variants.push_back(fixed(fmt::format("sigma={}", sigma), r, {"pabi-feldman"}, "delta_22",
                               "pabi-feldman (22)"));
    s.variants.push_back(fixed(fmt::format("sigma={}", sigma), r, {"pabi-feldman"}, "delta_23",
                               "pabi-feldman (23)"));
  }
  s.notes = {"(22), (23) use H_n in place of the printed log n (a valid bound; docs/analyses/comparisons.md); "
             "they do not depend on eta."};
  return s;
}

// isit (Asoodeh, Diaz, Calmon 2020) Fig. 2: Thm 4 vs Prop. 1 (15) for i = 1, 20, 39;
// sigma = 2, L = 1, beta = 0.5, eta = 0.5, rho = 0, D = 1, n = 40.
CompareSpec isit_fig2(int points) {
  CompareSpec s;
  s.title = "isit Fig. 2: PNSGD (Gaussian, rho = 0), Thm 4 vs Prop. 1 (15)";
  s.axis = CompareAxis::epsilon;
  s.xs = linspace(0.1, 5.0, points > 0 ? points : 50);
  for (std::int64_t i : {1, 20, 39}) {
    const Run r = pnsgd(40, 0.5, 2.0, 1.0, 0.5, 0.0, 1.0, Release::last, i);
    s.variants.push_back(fixed(fmt::format("i={}", i), r, {"contraction-per-index"}));
    s.variants.push_back(fixed(fmt::format("i={}", i), r, {"balle-mixing"}, "delta_15", "balle-mixing (15)"));
  }
  s.notes = {"(15) is 1 (no guarantee) for eps <= kappa; kappa uses M^(n-i), the larger reading of the "
             "printed exponent (docs/analyses/comparisons.md)."};
  return s;
}

// isit Fig. 3: the same with strong convexity, i = 20, 30, 39; sigma = 1, eta = 0.7, L = 1,
// D = 1, n = 40. The caption's rho = 0.4 > beta = 0.3 is not a loss class; M and the
// step-size condition are symmetric in (beta, rho), so beta = 0.4, rho = 0.3 gives the
// figure's numbers (tests/test_figures.cpp, IsitFig3.PrintedParametersAreInconsistent).
CompareSpec isit_fig3(int points) {
  CompareSpec s;
  s.title = "isit Fig. 3: PNSGD (Gaussian, strongly convex), Thm 4 vs Prop. 1 (15)";
  s.axis = CompareAxis::epsilon;
  s.xs = linspace(0.1, 5.0, points > 0 ? points : 50);
  for (std::int64_t i : {20, 30, 39}) {
    const Run r = pnsgd(40, 0.7, 1.0, 1.0, 0.4, 0.3, 1.0, Release::last, i);
    s.variants.push_back(fixed(fmt::format("i={}", i), r, {"contraction-per-index"}));
    s.variants.push_back(fixed(fmt::format("i={}", i), r, {"balle-mixing"}, "delta_15", "balle-mixing (15)"));
  }
  s.notes = {"The caption's rho = 0.4 > beta = 0.3 is no loss class; drawn with beta = 0.4, rho = 0.3 "
             "(M and eta < 2/(beta + rho) are symmetric in beta, rho)."};
  return s;
}

// langevin (Chourasia, Ye, Shokri 2021) Fig. 1: RDP eps vs K, Cor. 1 (solid) and the
// composition baseline (the caption's eps = alpha S_g^2 eta K / (4 sigma^2 n^2)); alpha in
// {10, 20, 30}, lambda in {1, 2, 4}, beta = 4, S_g = 4 (L = 2), n = 5000, eta = 0.02,
// sigma = 0.02 (chourasia convention: noise std sqrt(2 eta) sigma). The baseline does not
// depend on lambda; it is drawn once per alpha.
CompareSpec langevin_fig1(int points) {
  CompareSpec s;
  s.title = "langevin Fig. 1: Rényi privacy loss of noisy GD over K iterations";
  s.axis = CompareAxis::steps;
  s.x_label = "iterations K";
  s.xs = sweep_points(CompareAxis::steps, 1, 1000, points > 0 ? points : 100, false);
  auto run_at = [](double lambda) {
    return [lambda](double K) {
      Run r;
      r.n = 5000;
      r.steps = static_cast<std::int64_t>(K);
      r.batch_size = 5000;
      r.sampling = Sampling::full;
      r.eta = Schedule(0.02);
      r.noise_std = Schedule(noise_std_from_sigma(Convention::chourasia, 0.02, 0.02, 5000));
      r.loss.lipschitz = 2.0;
      r.loss.smoothness = 4.0;
      r.loss.strong_convexity = lambda;
      r.release = Release::last;
      r.validate();
      return r;
    };
  };
  for (double alpha : {10.0, 20.0, 30.0}) {
    for (double lambda : {1.0, 2.0, 4.0}) {
      CompareVariant v;
      v.label = fmt::format("alpha={}, lambda={}", alpha, lambda);
      v.run_at = run_at(lambda);
      v.analyses = {find_analysis("langevin")};
      v.rdp_order = alpha;
      s.variants.push_back(std::move(v));
    }
    CompareVariant base;
    base.label = fmt::format("alpha={}", alpha);
    base.run_at = run_at(1.0);
    base.analyses = {find_analysis("composition-rdp")};
    base.rdp_order = alpha;
    base.dashed = true;  // the caption: "Baseline composition analysis (dashed lines)"
    s.variants.push_back(std::move(base));
  }
  s.log_y = false;
  s.notes = {"langevin = Cor. 1 here (the smallest applicable of Thm 1 / Cor. 1); composition-rdp is "
             "the caption's baseline (every iterate released)."};
  return s;
}

// federated (Asoodeh, Chen, Calmon, Ozgur 2021) Fig. 2: delta vs eps of Thm 2 for sampling
// rates q = m/n in {0.1, 0.2, 0.3}; eta = 0.5, L = 1, rho = 1 (ball radius: diameter 2),
// sigma = 1.5 (federated convention: noise std eta sigma / sqrt(m)), n = 100, one pass
// T = n/m (the closed form's exponent). beta is not printed: beta = 1 (eta <= 2/beta holds).
CompareSpec federated_fig2(int points) {
  CompareSpec s;
  s.title = "federated Fig. 2: Algorithm 1, Thm 2, sub-sampling rates q = m/n";
  s.axis = CompareAxis::epsilon;
  s.xs = linspace(0.0, 5.0, points > 0 ? points : 51);
  for (std::int64_t m : {10, 20, 30}) {
    Run r;
    r.n = 100;
    r.batch_size = m;
    r.steps = 100 / m;
    r.sampling = Sampling::shuffle;
    r.eta = Schedule(0.5);
    r.noise_std = Schedule(noise_std_from_sigma(Convention::federated, 1.5, 0.5, m));
    r.loss.lipschitz = 1.0;
    r.loss.smoothness = 1.0;
    r.diameter = 2.0;
    r.release = Release::last;
    r.validate();
    s.variants.push_back(fixed(fmt::format("q={}", static_cast<double>(m) / 100), r, {"federated"}));
  }
  s.notes = {"beta is not printed in the caption; beta = 1 is used (Thm 2 needs eta <= 2/beta). "
             "T = n/m rounds (one pass)."};
  return s;
}

// altschuler-talwar 2022 Fig. 1 (an illustration without numbers): the privacy loss of the
// last iterate of Noisy-SGD stops growing after T-bar ~ n D / (L eta) steps, while the
// composition bound grows linearly. Drawn at the parameters of tests/test_shifted_renyi.cpp
// (FlatBeyondTBar...: n = 100, b = 10, eta = 0.5, sigma = 4 (noise std eta sigma), L = 1,
// M = 2, D = 1, T-bar = 200, RDP order alpha = 8) with Poisson batches, for which both
// analyses use the same subsampled-Gaussian per-step cost (composition-rdp has no
// amplification for fixed-size batches under replace-one), so the curves agree up to ~T-bar.
CompareSpec noisy_sgd_fig1(int points) {
  CompareSpec s;
  s.title = "noisy-sgd Fig. 1: last-iterate Rényi DP of Noisy-SGD vs T (T-bar = nD/(L eta) = 200)";
  s.axis = CompareAxis::steps;
  s.x_label = "iterations T";
  s.xs = sweep_points(CompareAxis::steps, 1, 2000, points > 0 ? points : 80, false);
  CompareVariant v;
  v.run_at = [](double T) {
    Run r;
    r.n = 100;
    r.steps = static_cast<std::int64_t>(T);
    r.batch_size = 10;
    r.sampling = Sampling::poisson;
    r.eta = Schedule(0.5);
    r.noise_std = Schedule(0.5 * 4.0);
    r.loss.lipschitz = 1.0;
    r.loss.smoothness = 2.0;
    r.diameter = 1.0;
    r.release = Release::last;
    r.validate();
    return r;
  };
  v.analyses = {find_analysis("shifted-renyi"), find_analysis("composition-rdp")};
  v.rdp_order = 8.0;
  s.variants.push_back(std::move(v));
  s.log_y = false;
  s.notes = {"The paper's figure is a schematic; these are hsdp's bounds at concrete parameters."};
  return s;
}

// Bok, Su, Altschuler 2024: eps vs epochs of the last iterate of NoisyCGD against composition,
// at the logistic-regression setting of ../shared/notes/last-iterate-fdp.md §7 T2: n = 60000,
// b = 1500 (l = 40 batches per epoch), eta = 0.05, Delta/sigma = 2/3 (noise multiplier 3),
// replace-one, delta = 1e-5; the contraction c = 1 - eta lambda set by the L2 weight lambda.
// Baselines: composition of the same cyclic batches, and of Poisson batches of the same
// expected size (q = 0.025), the strongest release-every accounting.
CompareSpec shifted_interpolation_ncgd(int points) {
  CompareSpec s;
  s.title = "NoisyCGD last iterate (shifted interpolation) vs composition: eps vs epochs";
  s.axis = CompareAxis::steps;
  s.x_label = "epochs E (40 batches each)";
  s.x_name = "epochs";
  s.xs = sweep_points(CompareAxis::steps, 1, 1000, points > 0 ? points : 40, true);
  s.log_x = true;
  auto run_at = [](Sampling sampling, double lambda) {
    return [sampling, lambda](double epochs) {
      Run r;
      r.n = 60000;
      r.batch_size = 1500;
      r.steps = static_cast<std::int64_t>(epochs) * 40;
      r.sampling = sampling;
      r.eta = Schedule(0.05);
      r.noise_std = Schedule(0.05 * 0.002);  // sigma = 0.002: Delta/sigma = (2/1500)/0.002
      r.loss.lipschitz = 1.0;
      r.loss.smoothness = 1.0;
      r.loss.strong_convexity = lambda;
      r.release = Release::last;
      r.validate();
      return r;
    };
  };
  for (double c : {0.9999, 0.999, 1.0}) {
    CompareVariant v;
    v.label = fmt::format("cyclic, c = {}", c);
    v.run_at = run_at(Sampling::cyclic, (1.0 - c) / 0.05);
    v.analyses = {find_analysis("shifted-interpolation")};
    s.variants.push_back(std::move(v));
  }
  CompareVariant cyclic;
  cyclic.label = "cyclic";
  cyclic.run_at = run_at(Sampling::cyclic, 0.0);
  cyclic.analyses = {find_analysis("composition-pld")};
  cyclic.dashed = true;
  s.variants.push_back(std::move(cyclic));
  CompareVariant poisson;
  poisson.label = "Poisson q = 0.025";
  poisson.run_at = run_at(Sampling::poisson, 0.0);
  poisson.analyses = {find_analysis("composition-pld")};
  poisson.dashed = true;
  s.variants.push_back(std::move(poisson));
  s.notes = {"Composition (dashed) assumes every iterate is released; the last-iterate bound of "
             "cyclic batches plateaus once the contraction forgets old epochs."};
  return s;
}

}  // namespace

const std::vector<std::string>& figure_names() {
  static const std::vector<std::string> names = {"journal-fig2",   "isit-fig2",     "isit-fig3",
                                                 "langevin-fig1",  "federated-fig2", "noisy-sgd-fig1",
                                                 "shifted-interpolation-ncgd"};
  return names;
}

CompareSpec figure(std::string_view name, int points) {
  if (points != 0) require_range(opt("points"), points, 2, 10000);
  if (name == "journal-fig2") return journal_fig2(points);
  if (name == "isit-fig2") return isit_fig2(points);
  if (name == "isit-fig3") return isit_fig3(points);
  if (name == "langevin-fig1") return langevin_fig1(points);
  if (name == "federated-fig2") return federated_fig2(points);
  if (name == "noisy-sgd-fig1") return noisy_sgd_fig1(points);
  if (name == "shifted-interpolation-ncgd") return shifted_interpolation_ncgd(points);
  std::string known;
  for (const auto& n : figure_names()) known += (known.empty() ? "" : ", ") + n;
  fail(opt("figure"), name, fmt::format("one of {}", known));
}

}  // namespace hsdp
