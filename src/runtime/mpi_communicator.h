// The MPI engine of the communicator (communicator.h): one process per device, started by
// `mpirun -np N`, on one host or several. Device rank = MPI rank in MPI_COMM_WORLD.
//
// Mapping. Each group gets its own MPI communicator (MPI_Comm_create_group over its ranks in group
// order, made on first use by the members alone and cached), so a device's index in the group is
// its MPI rank there and MPI's block order is the group's. The collectives are MPI's non-blocking
// ones (MPI_Iallreduce, MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ialltoall, MPI_Ibcast,
// MPI_Ibarrier), collective-permute is one MPI_Isend/MPI_Irecv per pair on the group's
// communicator, send is MPI_Issend (synchronous: it completes once received). f16 and bf16
// reductions convert to f32, reduce in f32 and round once, as the in-process engine does; the
// other dtypes reduce in MPI through the in-process engine's element-wise reduction (an MPI user
// op), so integer sums wrap and max/min propagate NaN alike. Under Open MPI the all-reduce is the
// ring unless the user picks another (MCA coll_libnbc_iallreduce_algorithm); each rank's kernels
// get its share of the host's cores (OpenMP threads) unless OMP_NUM_THREADS is set.
//
// Waiting. A call polls its request, yielding the core between polls for its first 2 ms (50 us
// where this host's ranks outnumber its cores), sleeping 10 us between them after that: MPI moves
// a non-blocking collective on only while its ranks poll.
//
// Messages (mailbox.h): MPI_Isend and MPI_Irecv under the message's tag on a duplicate of
// MPI_COMM_WORLD, polled as the collectives are.
//
// Timeout. A call polls for at most `timeout_seconds`, then fails with an error naming the
// collective and the group. MPI cannot cancel a posted collective, so after a timeout the process
// must end (MpiWorld::Abort ends every rank); under Open MPI a rank that dies is also noticed by
// mpirun, which ends the job naming the rank. Two things the in-process engine does that this one
// does not: the first call on a group is not timed, as it creates the group's communicator
// (MPI_Comm_create_group has no non-blocking form), so a peer that dies before a group's first
// collective is left to mpirun to notice; and members whose calls disagree are not compared first:
// MPI reports what it detects (a truncated message) and the rest is undefined, so the SPMD
// program's agreement matters.
#ifndef ALPA_RUNTIME_MPI_COMMUNICATOR_H_
#define ALPA_RUNTIME_MPI_COMMUNICATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/communicator.h"
#include "runtime/mailbox.h"
#include "support/status.h"

namespace alpa::runtime {

struct MpiOptions {
  double timeout_seconds = 10;  // as InProcessOptions: a stuck peer is reported within seconds
};

// Whether this process was started by mpirun (Open MPI's or a PMI launcher's environment).
bool LaunchedByMpirun();

// The process's MPI world: MPI_Init_thread on creation, MPI_Finalize on destruction; at most one
// per process (MPI cannot be initialised twice).
class MpiWorld {
 public:
  static Result<std::unique_ptr<MpiWorld>> Init(MpiOptions options = {});
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int64_t rank() const;
  int64_t size() const;
  // This process's device: to be used by one thread at a time.
  Communicator& communicator();
  // This process's device's tagged messages (pipelined programs): used by the same thread.
  Mailbox& mailbox();
  // Ends every rank of the job with `exit_code` (MPI_Abort), after this rank prints `message` to
  // stderr. For an error some peers may not have seen: returning would leave them waiting.
  [[noreturn]] void Abort(const std::string& message, int exit_code);

 private:
  MpiWorld() = default;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_MPI_COMMUNICATOR_H_
