// hsdp.Generator and hsdp.BatchOrder: the trainer's randomness for loops written in Python
// (hsdp.torch, docs/python.md "hsdp.torch: a privacy engine"). A Generator is the CSPRNG of
// include/hsdp/random/ (ChaCha20 keyed from the operating system, or from a seed: "seeded: for
// experiments, not for release"); BatchOrder draws the trainer's batch orders from it
// (src/train/sampler.cpp: the same Fisher-Yates permutations, exact Poisson gaps, cyclic
// order); Generator.add_grid_noise is the trainer's noise (random::GridNoise: the value rounded
// to a power-of-two grid plus an exact discrete Gaussian on it, docs/security.md).
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "common.hpp"
#include "hsdp/random/csprng.hpp"
#include "hsdp/random/samplers.hpp"
#include "hsdp/random/noise_grid.hpp"
#include "train/sampler.hpp"  // src/: the trainer's BatchSampler

namespace hsdp::python {

namespace {

struct PyGenerator {
  random::Csprng rng;
  std::optional<std::uint64_t> seed;
  // The noise grid of the last std (GridNoise precomputes lambda and the units).
  std::optional<random::GridNoise> grid;
  double grid_std = 0.0;
};

struct PyBatchOrder {
  std::shared_ptr<PyGenerator> generator;
  std::unique_ptr<train::BatchSampler> sampler;
  Sampling sampling;
  std::int64_t n, b, t = 0;
  bool drop_last;
};

std::string randomness(const PyGenerator& g) {
  return g.seed ? fmt::format("seeded: for experiments, not for release (ChaCha20 keyed from seed {}: anyone who "
                              "knows the seed can regenerate every draw)",
                              *g.seed)
                : std::string("ChaCha20 keyed from operating-system entropy (getrandom): never written, not "
                              "reproducible");
}

}  // namespace

void bind_random(py::module_& m) {
  py::class_<PyGenerator, std::shared_ptr<PyGenerator>>(
      m, "Generator",
      "hsdp's CSPRNG (ChaCha20 of OpenSSL, docs/security.md), the generator hsdp train draws its batch "
      "order and noise from. Generator() is keyed from operating-system entropy (for a model you "
      "release); Generator(seed=S) from a seed (reproducible: seeded, for experiments, not for release).")
      .def(py::init([](const std::optional<py::int_>& seed) {
             const auto s = unsigned_keyword("seed", seed);
             return std::make_shared<PyGenerator>(
                 PyGenerator{s ? random::Csprng::from_seed(*s) : random::Csprng::from_entropy(), s, {}, 0.0});
           }),
           py::kw_only(), py::arg("seed") = py::none(),
           "A generator keyed from operating-system entropy, or from seed (0 .. 2**64 - 1; for experiments).")
      .def_property_readonly("seeded", [](const PyGenerator& g) { return g.seed.has_value(); },
                             "True when keyed from a seed (for experiments, not for release).")
      .def_property_readonly("randomness", [](const PyGenerator& g) { return randomness(g); },
                             "Where the draws come from, in words (the ledger and the certificate show it).")
      .def(
          "add_grid_noise",
          [](PyGenerator& g, py::array_t<double, py::array::forcecast | py::array::c_style> values, double std) {
            if (!(std::isfinite(std) && std > 0))
              fail(opt("std"), show(std), "a positive finite noise std");
            if (!g.grid || g.grid_std != std) {
              g.grid.emplace(random::Law::gaussian, std);
              g.grid_std = std;
            }
            py::array_t<double> out(values.request().shape);
            auto* dst = out.mutable_data();
            const double* src = values.data();
            std::uint64_t out_of_range = 0;
            const py::ssize_t count = values.size();
            for (py::ssize_t i = 0; i < count; ++i) dst[i] = g.grid->add(g.rng, src[i], out_of_range);
            return py::make_tuple(out, out_of_range);
          },
          py::arg("values"), py::kw_only(), py::arg("std"),
          "(values rounded to the noise grid of std plus discrete Gaussian noise of std at least `std` on it, "
          "the number of values outside the grid's exact range): the noise of hsdp train (docs/security.md). "
          "The grid spacing is at most std * 2**-32.");

  m.def(
          "grid_charges",
          [](std::int64_t parameters, std::int64_t steps) {
            if (parameters < 1) fail(opt("parameters"), std::to_string(parameters), "an integer >= 1");
            if (steps < 1) fail(opt("steps"), std::to_string(steps), "an integer >= 1");
            // The trainer's charges (include/hsdp/random/noise_grid.hpp, docs/security.md).
            const NoiseGrid g = random::noise_grid(static_cast<std::size_t>(parameters), steps, NoiseKind::gaussian);
            return py::make_tuple(g.slack, g.epsilon, g.log_beta);
          },
          py::kw_only(), py::arg("parameters"), py::arg("steps"),
          "(grid_slack, grid_epsilon, grid_log_beta) of a run adding grid noise to `parameters` coordinates at each of "
          "`steps` steps: the hsdp.Run keywords that charge the grid's cost, as hsdp train states them.");

  py::class_<PyBatchOrder>(
      m, "BatchOrder",
      "The batch order of hsdp train (src/train/sampler.cpp) drawn from a Generator: 'shuffle' (a fresh "
      "permutation every epoch cut into floor(n/b) batches of b, or with drop_last=False ceil(n/b) batches whose "
      "last holds the n mod b left), 'poisson' (each record independently with probability b/n, exactly), "
      "'fixed' (b records uniformly without replacement each step), 'cyclic' (the stored order, wrapping around).")
      .def(py::init([](const std::string& sampling, std::int64_t n, std::int64_t batch_size,
                       std::shared_ptr<PyGenerator> generator, bool drop_last) {
             const Sampling s = parse_name<Sampling>(sampling, opt("sampling"));
             if (s == Sampling::full) fail(opt("sampling"), sampling, "one of poisson, fixed, shuffle, cyclic");
             if (n < 1) fail(opt("n"), std::to_string(n), "an integer >= 1");
             if (batch_size < 1 || batch_size > n)
               fail(opt("batch_size"), std::to_string(batch_size), fmt::format("an integer in [1, n = {}]", n));
             if (!drop_last && s != Sampling::shuffle)
               fail(opt("drop_last"), "False", "True unless sampling = shuffle");
             auto o = std::make_unique<PyBatchOrder>();
             o->generator = std::move(generator);
             o->sampling = s;
             o->n = n;
             o->b = batch_size;
             o->drop_last = drop_last;
             o->sampler = std::make_unique<train::BatchSampler>(s, n, batch_size, o->generator->rng, drop_last);
             return o;
           }),
           py::arg("sampling"), py::kw_only(), py::arg("n"), py::arg("batch_size"), py::arg("generator"),
           py::arg("drop_last") = true,
           "The order of `sampling` over n records with batch size b = batch_size, drawn from `generator`.")
      .def(
          "next",
          [](PyBatchOrder& o) {
            std::vector<std::int64_t> out;
            o.sampler->next(++o.t, out);
            py::array_t<std::int64_t> a(static_cast<py::ssize_t>(out.size()));
            std::copy(out.begin(), out.end(), a.mutable_data());
            return a;
          },
          "The record indices (0-based, int64) of the next step's batch.")
      .def_property_readonly("steps", [](const PyBatchOrder& o) { return o.t; }, "Batches drawn so far.")
      .def_property_readonly("sampling", [](const PyBatchOrder& o) { return std::string(to_string(o.sampling)); },
                             "The order's name.")
      .def_property_readonly("n", [](const PyBatchOrder& o) { return o.n; }, "Records.")
      .def_property_readonly("batch_size", [](const PyBatchOrder& o) { return o.b; }, "b.")
      .def_property_readonly("drop_last", [](const PyBatchOrder& o) { return o.drop_last; },
                             "Shuffled batches: False keeps the partial last batch of each epoch.")
      .def_property_readonly(
          "batches_per_epoch",
          [](const PyBatchOrder& o) {
            if (o.sampling == Sampling::shuffle) return o.drop_last ? o.n / o.b : (o.n + o.b - 1) / o.b;
            return std::max<std::int64_t>(1, o.n / o.b);
          },
          "Steps per epoch: floor(n/b) (ceil(n/b) for shuffled batches that keep the partial one).")
      .def(
          "describe",
          [](const PyBatchOrder& o, std::int64_t steps) {
            return train::describe_batch_order(o.sampling, o.n, o.b, steps, o.generator->seed.has_value(), o.drop_last);
          },
          py::arg("steps"), "The order in words (as hsdp train's model file states it), for a run of `steps` steps.");
}

}  // namespace hsdp::python
