// Data-parallel training under Open MPI (docs/distributed.md). Declarations only: no MPI
// header here; src/train/distributed.cpp is built into the hsdp_distributed library, with
// MPI when the build option HSDP_WITH_MPI is on and as a one-process stub otherwise.
#pragma once

#include <string_view>

#include "hsdp/data/shard.hpp"
#include "hsdp/train/request.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::train::distributed {

/// This process among the processes of the job: rank 0 of 1 unless started by mpirun.
struct World {
  int rank = 0;
  int size = 1;
};

/// True when this build can run data-parallel (HSDP_WITH_MPI).
bool available();

/// Initialises MPI when the process was started by an MPI launcher (Open MPI's mpirun
/// sets OMPI_COMM_WORLD_SIZE); a process started otherwise never touches MPI. Returns the
/// world, also kept for world().
World init(int* argc, char*** argv);
const World& world();

/// Ends MPI (a no-op when init() did not start it).
void finalize();

/// The gradient-sum hooks for TrainConfig::data_parallel: MPI_Allreduce(SUM) of the
/// partial gradient sums in MPI_COMM_WORLD, and process 0's seed broadcast.
TrainConfig::DataParallel data_parallel();

/// The hooks of federated training (TrainConfig::federation): rank 0 the server, MPI_Bcast
/// from rank 0 (user ids as int64, theta) and MPI_Reduce(SUM) to rank 0 in MPI_COMM_WORLD.
TrainConfig::Federation federation();

/// The collectives of a sharded read (data/shard.hpp) in MPI_COMM_WORLD: MPI_Allgather of
/// one 64-bit count, MPI_Allgatherv of text, MPI_Allreduce(SUM) of doubles.
data::Collectives collectives();

/// The layout of this job for a training request (train/request.hpp): one process, or
/// the world's processes with the hooks above (the request picks federated or data-parallel
/// by the algorithm).
Layout layout();

/// Stops the whole job (MPI_Abort on every process) with `status` after printing
/// "hsdp: error: rank R: message" to stderr; without MPI, prints the message and exits.
[[noreturn]] void abort_job(std::string_view message, int status);

}  // namespace hsdp::train::distributed
