// Helpers of the tests under mpirun (tests/mpi/): `hsdp ARGS` as one process or under
// `mpirun -np K`, and the largest parameter difference between two model documents.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

#include <unistd.h>

namespace hsdp::testing::mpi {

inline const std::string kHeart = "/usr/share/doc/liblinear-tools/examples/heart_scale";
// docs/distributed.md: max |theta difference| to one process (measured about 1e-15).
constexpr double kTolerance = 1e-12;

/// `hsdp ARGS` as one process (processes == 0) or under mpirun -np processes. One OpenMP
/// thread per process: the machine has few cores, and the result does not depend on the
/// thread count (sampler.hpp).
inline CliResult run(int processes, const std::string& args) {
  std::string cmd = std::string(HSDP_CLI_PATH) + " " + args;
  if (processes > 0)
    cmd = std::string(HSDP_MPIEXEC) + " --allow-run-as-root --oversubscribe -np " +
          std::to_string(processes) + " " + cmd;
  return run_command("OMP_NUM_THREADS=1 " + cmd);
}

/// The model document's parameters: the weights row by row, then the intercepts.
inline std::vector<double> parameters(const nlohmann::json& model) {
  std::vector<double> theta;
  for (const auto& row : model["weights"])
    for (const auto& v : row) theta.push_back(v.get<double>());
  for (const auto& v : model["intercept"]) theta.push_back(v.get<double>());
  return theta;
}

/// max_j |theta_j(a) - theta_j(b)| (the two must have the same, non-zero, size).
inline double max_difference(const nlohmann::json& a, const nlohmann::json& b) {
  const auto x = parameters(a), y = parameters(b);
  EXPECT_EQ(x.size(), y.size());
  EXPECT_FALSE(x.empty());
  double m = 0.0;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

/// Writes `content` to a temporary data file F (its name from `tag`), runs `hsdp train --data
/// F ARGS --output F.model.json` under mpirun -np processes and expects the job stopped by
/// the process that meets line `line`: a non-zero exit, "hsdp: error: rank " and "F:line:"
/// on stderr, nothing on stdout, no model file.
inline void expect_job_stops_at_line(int processes, const std::string& tag, const std::string& content,
                                     const std::string& args, int line) {
  const std::string bad = ::testing::TempDir() + "hsdp_mpi_" + tag + "_" + std::to_string(::getpid());
  const std::string model = bad + ".model.json";
  {
    std::ofstream f(bad);
    f << content;
  }
  std::filesystem::remove(model);
  const CliResult r = run(processes, "train --data " + bad + " " + args + " --output " + model);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("hsdp: error: rank "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad + ":" + std::to_string(line) + ":"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(model));  // nothing written
  std::filesystem::remove(bad);
}

}  // namespace hsdp::testing::mpi
