// MPI glue of data-parallel and federated training (include/hsdp/train/distributed.hpp). The only file
// that includes <mpi.h>; compiled without it (one process) when HSDP_WITH_MPI is off.
#include "hsdp/train/distributed.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if HSDP_WITH_MPI
// The C API only (Open MPI would otherwise pull in its deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace hsdp::train::distributed {

namespace {
World the_world;
[[maybe_unused]] bool started = false;
}  // namespace

bool available() { return HSDP_WITH_MPI != 0; }

World init([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#if HSDP_WITH_MPI
  // Only under a launcher: a plain `hsdp` run stays a plain process (no MPI start-up cost,
  // no MPI messages).
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    MPI_Init(argc, argv);
    started = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &the_world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &the_world.size);
    // Errors of MPI calls abort the job (the default on MPI_COMM_WORLD, stated here).
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
#endif
  return the_world;
}

const World& world() { return the_world; }

void finalize() {
#if HSDP_WITH_MPI
  if (started) {
    MPI_Finalize();
    started = false;
  }
#endif
}

TrainConfig::DataParallel data_parallel() {
  TrainConfig::DataParallel p;
  p.rank = the_world.rank;
  p.size = the_world.size;
#if HSDP_WITH_MPI
  p.sum = [](std::vector<double>& v) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  };
  p.share_seed = [](std::uint64_t seed) {
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return seed;
  };
#else
  p.sum = [](std::vector<double>&) {};
  p.share_seed = [](std::uint64_t seed) { return seed; };
#endif
  return p;
}

TrainConfig::Federation federation() {
  TrainConfig::Federation f;
  f.rank = the_world.rank;
  f.size = the_world.size;
#if HSDP_WITH_MPI
  f.broadcast_ids = [](std::vector<std::int64_t>& v) {
    MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_INT64_T, 0, MPI_COMM_WORLD);
  };
  f.broadcast = [](std::vector<double>& v) {
    MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  };
  f.reduce = [](std::vector<double>& v) {
    if (the_world.rank == 0)
      MPI_Reduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else
      MPI_Reduce(v.data(), nullptr, static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  };
#else
  f.broadcast_ids = [](std::vector<std::int64_t>&) {};
  f.broadcast = [](std::vector<double>&) {};
  f.reduce = [](std::vector<double>&) {};
#endif
  return f;
}

data::Collectives collectives() {
  data::Collectives c = data::one_process();
  c.rank = the_world.rank;
  c.size = the_world.size;
#if HSDP_WITH_MPI
  if (!started) return c;
  c.allgather = [](std::uint64_t v) {
    std::vector<std::uint64_t> all(static_cast<std::size_t>(the_world.size));
    MPI_Allgather(&v, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    return all;
  };
  c.allgather_text = [](const std::string& text) {
    const auto K = static_cast<std::size_t>(the_world.size);
    int mine = static_cast<int>(text.size());
    std::vector<int> sizes(K), displs(K, 0);
    MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (std::size_t r = 1; r < K; ++r) displs[r] = displs[r - 1] + sizes[r - 1];
    std::string all(static_cast<std::size_t>(displs[K - 1] + sizes[K - 1]), '\0');
    MPI_Allgatherv(text.data(), mine, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < K; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(sizes[r])));
    return out;
  };
  c.sum = [](std::vector<double>& v) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  };
#endif
  return c;
}

Layout layout() {
  Layout l;
  l.rank = the_world.rank;
  l.size = the_world.size;
  if (l.size > 1) {
    l.collectives = collectives();
    l.data_parallel = data_parallel();
    l.federation = federation();
  }
  return l;
}

void abort_job(std::string_view message, int status) {
  if (the_world.size > 1)
    std::fprintf(stderr, "hsdp: error: rank %d: %.*s\n", the_world.rank,
                 static_cast<int>(message.size()), message.data());
  else
    std::fprintf(stderr, "hsdp: error: %.*s\n", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
#if HSDP_WITH_MPI
  if (started) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  std::exit(status);
}

}  // namespace hsdp::train::distributed
