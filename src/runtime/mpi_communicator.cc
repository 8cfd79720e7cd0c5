#include "runtime/mpi_communicator.h"

#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <thread>
#include <vector>

#include "ir/element_type.h"
#include "runtime/collective_checks.h"
#include "runtime/reduce_buffers.h"

namespace alpa::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How long a wait polls, yielding the core, before it sleeps between polls (MpiCommunicator::Wait).
// A rank with a core of its own spins: on 2 ranks here (bench/collectives/mpi_collectives_bench.cc)
// a 256 KiB all-reduce took 355 to 695 us when ranks slept after 50 us and 43 to 71 us spinning,
// and gpt-tiny's step (`alpa run gpt-tiny --cluster local:2 --backend mpi`) 5.4 to 9.2 ms against
// 2.3 to 2.6 ms. Budgets of 0.2, 2 and 20 ms measured alike. Ranks that share cores sleep after
// 50 us, so that the core goes to the peer they wait for.
constexpr Clock::duration kSpinWithOwnCore = std::chrono::milliseconds(2);
constexpr Clock::duration kSpinSharingCores = std::chrono::microseconds(50);

constexpr int kPermuteTag = 1;
constexpr int kMessageTag = 2;

// The MPI type a reduction sees for `dtype` (f16 and bf16 are reduced as f32); MPI_BYTE for
// dtypes only moved.
MPI_Datatype ReductionType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32:
      return MPI_FLOAT;
    case ir::DType::kF64:
      return MPI_DOUBLE;
    case ir::DType::kS8:
      return MPI_INT8_T;
    case ir::DType::kS16:
      return MPI_INT16_T;
    case ir::DType::kS32:
      return MPI_INT32_T;
    case ir::DType::kS64:
      return MPI_INT64_T;
    case ir::DType::kU8:
      return MPI_UINT8_T;
    case ir::DType::kU16:
      return MPI_UINT16_T;
    case ir::DType::kU32:
      return MPI_UINT32_T;
    case ir::DType::kU64:
      return MPI_UINT64_T;
    default:
      return MPI_BYTE;
  }
}

ir::DType DTypeOf(MPI_Datatype type) {
  for (ir::DType dtype :
       {ir::DType::kF32, ir::DType::kF64, ir::DType::kS8, ir::DType::kS16, ir::DType::kS32,
        ir::DType::kS64, ir::DType::kU8, ir::DType::kU16, ir::DType::kU32, ir::DType::kU64}) {
    if (ReductionType(dtype) == type) return dtype;
  }
  return ir::DType::kF32;  // unreachable: only the types above are reduced
}

// MPI's user-defined reduction: inout = op(inout, in) through the reduction the in-process engine
// uses, so that both engines share integer wrap-around and NaN propagation.
template <ReduceOp kOp>
void Reduce(void* in, void* inout, int* count, MPI_Datatype* type) {
  const void* inputs[] = {inout, in};
  ReduceElements(DTypeOf(*type), kOp, inputs, inout, *count);
}

bool IsHalf(ir::DType dtype) { return dtype == ir::DType::kF16 || dtype == ir::DType::kBF16; }

template <typename Half>
void Widen(const void* source, float* target, int64_t count) {
  const Half* half = static_cast<const Half*>(source);
  for (int64_t i = 0; i < count; ++i) target[i] = static_cast<float>(half[i]);
}
template <typename Half>
void Narrow(const float* source, void* target, int64_t count) {
  Half* half = static_cast<Half*>(target);
  for (int64_t i = 0; i < count; ++i) half[i] = static_cast<Half>(source[i]);
}
std::vector<float> ToF32(ConstBuffer buffer) {
  std::vector<float> wide(static_cast<size_t>(buffer.count));
  if (buffer.dtype == ir::DType::kF16) {
    Widen<Eigen::half>(buffer.data, wide.data(), buffer.count);
  } else {
    Widen<Eigen::bfloat16>(buffer.data, wide.data(), buffer.count);
  }
  return wide;
}
void FromF32(const std::vector<float>& wide, MutableBuffer buffer) {
  if (buffer.dtype == ir::DType::kF16) {
    Narrow<Eigen::half>(wide.data(), buffer.data, buffer.count);
  } else {
    Narrow<Eigen::bfloat16>(wide.data(), buffer.data, buffer.count);
  }
}

int64_t Bytes(ConstBuffer buffer) { return buffer.count * ir::DTypeByteSize(buffer.dtype); }

int Int(int64_t count) { return static_cast<int>(count); }

std::string GroupLabel(std::string_view kind, DeviceGroup group) {
  return fmt::format("{} over devices {}", kind, GroupText(group));
}

int HostCores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// The ranks of this job on this host (MPI_COMM_TYPE_SHARED); 1 when MPI cannot tell.
int RanksOnThisHost() {
  MPI_Comm host = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) !=
      MPI_SUCCESS) {
    return 1;
  }
  int ranks_here = 1;
  MPI_Comm_size(host, &ranks_here);
  MPI_Comm_free(&host);
  return ranks_here;
}

// Ranks on one host share its cores: each rank's kernels get cores / (ranks on this host) OpenMP
// threads, unless the user set OMP_NUM_THREADS. Left at the default (every core per rank), 4 ranks
// on 2 cores spent a GPT-tiny step in OpenMP's spin-waits: 700 ms against 80 ms.
void ShareTheHostsCores(int ranks_here) {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return;
  omp_set_num_threads(std::max(1, HostCores() / ranks_here));
}

Status Check(const std::string& label, int code) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status(StatusCode::kInternal,
                fmt::format("{}: MPI error: {}", label, std::string(text, length)));
}

// Polls until every request completes or `timeout_seconds` pass, yielding the core between polls
// for `spin`, then sleeping between them. MPI moves a non-blocking call on only inside MPI_Test,
// so a rank asleep holds up each of a collective's rounds for its peers as well. The sleep hands
// the core to a peer when ranks outnumber cores (yielding alone does not under Linux's scheduler:
// 4 ranks on 2 cores took 30x longer per step).
// `statuses`: one per request, or MPI_STATUSES_IGNORE.
Status WaitFor(const std::string& label, std::vector<MPI_Request>& requests, double timeout_seconds,
               Clock::duration spin, int64_t rank, MPI_Status* statuses = MPI_STATUSES_IGNORE) {
  const auto start = Clock::now();
  const auto timeout = std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    int done = 0;
    ALPA_RETURN_IF_ERROR(
        Check(label, MPI_Testall(Int(requests.size()), requests.data(), &done, statuses)));
    if (done) return Status::Ok();
    const auto waited = Clock::now() - start;
    if (waited > timeout) {
      return Status(StatusCode::kDeadlineExceeded,
                    fmt::format("{}: timed out after {} s on device {}; a peer died, stopped "
                                "or skipped this call",
                                label, timeout_seconds, rank));
    }
    if (waited < spin) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(10));
    }
  }
}

}  // namespace

bool LaunchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MpiOptions options, int64_t rank, int64_t size, Clock::duration spin)
      : options_(options), rank_(rank), size_(size), spin_(spin) {
    MPI_Op_create(&Reduce<ReduceOp::kSum>, /*commute=*/1, &ops_[0]);
    MPI_Op_create(&Reduce<ReduceOp::kMax>, 1, &ops_[1]);
    MPI_Op_create(&Reduce<ReduceOp::kMin>, 1, &ops_[2]);
  }
  ~MpiCommunicator() override {
    for (auto& [ranks, comm] : groups_) MPI_Comm_free(&comm);
    for (MPI_Op& op : ops_) MPI_Op_free(&op);
  }

  int64_t rank() const override { return rank_; }
  int64_t world_size() const override { return size_; }

  Status AllReduce(DeviceGroup group, ReduceOp op, ConstBuffer input,
                   MutableBuffer output) override {
    const std::string label = GroupLabel("all-reduce", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(
        CheckCollectiveArguments(CollectiveKind::kAllReduce, Int(group.size()), input, output, op)
            .WithContext(label));
    if (IsHalf(input.dtype)) {
      std::vector<float> wide = ToF32(input);
      ALPA_RETURN_IF_ERROR(Run(label, [&](MPI_Request* request) {
        return MPI_Iallreduce(MPI_IN_PLACE, wide.data(), Int(input.count), MPI_FLOAT, Op(op), comm,
                              request);
      }));
      FromF32(wide, output);
      return Status::Ok();
    }
    const void* send = input.data == output.data ? MPI_IN_PLACE : input.data;
    return Run(label, [&](MPI_Request* request) {
      return MPI_Iallreduce(send, output.data, Int(input.count), ReductionType(input.dtype), Op(op),
                            comm, request);
    });
  }

  Status AllGather(DeviceGroup group, ConstBuffer input, MutableBuffer output) override {
    const std::string label = GroupLabel("all-gather", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(
        CheckCollectiveArguments(CollectiveKind::kAllGather, Int(group.size()), input, output)
            .WithContext(label));
    const int bytes = Int(Bytes(input));
    const int index = IndexOf(group);
    // The input already in place as this member's block is MPI_IN_PLACE (MPI forbids aliasing).
    const bool in_place = input.data == static_cast<char*>(output.data) + int64_t{index} * bytes;
    return Run(label, [&](MPI_Request* request) {
      return MPI_Iallgather(in_place ? MPI_IN_PLACE : input.data, bytes, MPI_BYTE, output.data,
                            bytes, MPI_BYTE, comm, request);
    });
  }

  Status ReduceScatter(DeviceGroup group, ReduceOp op, ConstBuffer input,
                       MutableBuffer output) override {
    const std::string label = GroupLabel("reduce-scatter", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(CheckCollectiveArguments(CollectiveKind::kReduceScatter, Int(group.size()),
                                                  input, output, op)
                             .WithContext(label));
    if (IsHalf(input.dtype)) {
      std::vector<float> wide = ToF32(input);
      std::vector<float> block(static_cast<size_t>(output.count));
      ALPA_RETURN_IF_ERROR(Run(label, [&](MPI_Request* request) {
        return MPI_Ireduce_scatter_block(wide.data(), block.data(), Int(output.count), MPI_FLOAT,
                                         Op(op), comm, request);
      }));
      FromF32(block, output);
      return Status::Ok();
    }
    return Run(label, [&](MPI_Request* request) {
      return MPI_Ireduce_scatter_block(input.data, output.data, Int(output.count),
                                       ReductionType(input.dtype), Op(op), comm, request);
    });
  }

  Status AllToAll(DeviceGroup group, ConstBuffer input, MutableBuffer output) override {
    const std::string label = GroupLabel("all-to-all", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(
        CheckCollectiveArguments(CollectiveKind::kAllToAll, Int(group.size()), input, output)
            .WithContext(label));
    const int block = Int(Bytes(input) / static_cast<int64_t>(group.size()));
    return Run(label, [&](MPI_Request* request) {
      return MPI_Ialltoall(input.data, block, MPI_BYTE, output.data, block, MPI_BYTE, comm,
                           request);
    });
  }

  Status Broadcast(DeviceGroup group, int64_t root, MutableBuffer buffer) override {
    const std::string label = GroupLabel("broadcast", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(CheckBuffer(buffer, "buffer").WithContext(label));
    const auto root_at = std::find(group.begin(), group.end(), root);
    if (root_at == group.end())
      return InvalidArgument("{}: root {} is not in the group", label, root);
    return Run(label, [&](MPI_Request* request) {
      return MPI_Ibcast(buffer.data, Int(Bytes(buffer)), MPI_BYTE, Int(root_at - group.begin()),
                        comm, request);
    });
  }

  Status CollectivePermute(DeviceGroup group, std::span<const SourceTarget> pairs,
                           ConstBuffer input, MutableBuffer output) override {
    const std::string label = GroupLabel("collective-permute", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    ALPA_RETURN_IF_ERROR(CheckCollectiveArguments(CollectiveKind::kCollectivePermute,
                                                  Int(group.size()), input, output)
                             .WithContext(label));
    ALPA_RETURN_IF_ERROR(CheckPermutePairs(group, pairs).WithContext(label));
    auto index_of = [&](int64_t rank) {
      return Int(std::find(group.begin(), group.end(), rank) - group.begin());
    };
    const int bytes = Int(Bytes(input));
    std::vector<MPI_Request> requests;
    bool received = false;
    for (const auto& [source, target] : pairs) {
      if (source == rank_ && target == rank_) {
        std::memmove(output.data, input.data, static_cast<size_t>(bytes));
        received = true;
        continue;
      }
      if (source == rank_) {
        requests.emplace_back();
        ALPA_RETURN_IF_ERROR(Check(label, MPI_Isend(input.data, bytes, MPI_BYTE, index_of(target),
                                                    kPermuteTag, comm, &requests.back())));
      }
      if (target == rank_) {
        requests.emplace_back();
        ALPA_RETURN_IF_ERROR(Check(label, MPI_Irecv(output.data, bytes, MPI_BYTE, index_of(source),
                                                    kPermuteTag, comm, &requests.back())));
        received = true;
      }
    }
    if (!received && bytes > 0) std::memset(output.data, 0, static_cast<size_t>(bytes));
    return Wait(label, requests);
  }

  Status Send(int64_t target, ConstBuffer message) override {
    const std::string label = fmt::format("send from device {} to device {}", rank_, target);
    ALPA_RETURN_IF_ERROR(CheckPeer(target, rank_, size_, label));
    ALPA_RETURN_IF_ERROR(CheckBuffer(message, "message").WithContext(label));
    return Run(label, [&](MPI_Request* request) {
      return MPI_Issend(message.data, Int(Bytes(message)), MPI_BYTE, Int(target), kMessageTag,
                        MPI_COMM_WORLD, request);
    });
  }

  Status Recv(int64_t source, MutableBuffer message) override {
    const std::string label = fmt::format("recv from device {} on device {}", source, rank_);
    ALPA_RETURN_IF_ERROR(CheckPeer(source, rank_, size_, label));
    ALPA_RETURN_IF_ERROR(CheckBuffer(message, "message").WithContext(label));
    return Run(label, [&](MPI_Request* request) {
      return MPI_Irecv(message.data, Int(Bytes(message)), MPI_BYTE, Int(source), kMessageTag,
                       MPI_COMM_WORLD, request);
    });
  }

  Status Barrier(DeviceGroup group) override {
    const std::string label = GroupLabel("barrier", group);
    ALPA_ASSIGN_OR_RETURN(MPI_Comm comm, Prepare(group, label));
    return Run(label, [&](MPI_Request* request) { return MPI_Ibarrier(comm, request); });
  }

 private:
  MPI_Op Op(ReduceOp op) const { return ops_[static_cast<size_t>(op)]; }

  int IndexOf(DeviceGroup group) const {
    return Int(std::find(group.begin(), group.end(), rank_) - group.begin());
  }

  // The group's communicator (made on first use by its members), after the group's checks.
  Result<MPI_Comm> Prepare(DeviceGroup group, const std::string& label) {
    ALPA_RETURN_IF_ERROR(IndexInGroup(group, rank_, size_, label).status());
    std::vector<int64_t> ranks(group.begin(), group.end());
    auto found = groups_.find(ranks);
    if (found != groups_.end()) return found->second;
    MPI_Group world_group, members;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    std::vector<int> ints(ranks.begin(), ranks.end());
    MPI_Group_incl(world_group, Int(ints.size()), ints.data(), &members);
    MPI_Comm comm = MPI_COMM_NULL;
    const int code = MPI_Comm_create_group(MPI_COMM_WORLD, members, /*tag=*/0, &comm);
    MPI_Group_free(&members);
    MPI_Group_free(&world_group);
    ALPA_RETURN_IF_ERROR(Check(label, code));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    groups_.emplace(std::move(ranks), comm);
    return comm;
  }

  // Posts one non-blocking call and waits for it.
  template <typename Post>
  Status Run(const std::string& label, const Post& post) {
    std::vector<MPI_Request> requests(1);
    ALPA_RETURN_IF_ERROR(Check(label, post(&requests[0])));
    return Wait(label, requests);
  }

  Status Wait(const std::string& label, std::vector<MPI_Request>& requests) {
    return WaitFor(label, requests, options_.timeout_seconds, spin_, rank_);
  }

  MpiOptions options_;
  int64_t rank_;
  int64_t size_;
  MPI_Op ops_[3];  // by ReduceOp
  Clock::duration spin_;
  std::map<std::vector<int64_t>, MPI_Comm> groups_;
};

// The MPI engine of the mailbox (mailbox.h): MPI_Isend and MPI_Irecv under the message's tag on a
// duplicate of the world's communicator. A posted message stays here until its send completes;
// each post first frees those that have, and Flush waits for the rest.
class MpiMailbox final : public Mailbox {
 public:
  MpiMailbox(MPI_Comm comm, MpiOptions options, int64_t rank, int64_t size, Clock::duration spin)
      : comm_(comm), options_(options), rank_(rank), size_(size), spin_(spin) {
    int* tag_limit = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_limit, &found);
    tag_limit_ = found ? *tag_limit : 32767;  // the least MPI_TAG_UB the standard allows
  }
  // A message still in flight here means the step failed: it gets the timeout to leave, as MPI
  // may read its buffer until then.
  ~MpiMailbox() override {
    static_cast<void>(Flush(rank_));
    MPI_Comm_free(&comm_);
  }

  Status Post(int64_t source, int64_t target, int64_t tag, ir::Literal message) override {
    const std::string label =
        fmt::format("message {} from device {} to device {}", tag, source, target);
    ALPA_RETURN_IF_ERROR(CheckEnds(label, source, target, source));
    if (tag < 0 || tag > tag_limit_) {
      return InvalidArgument("{}: MPI tags run from 0 to {} here", label, tag_limit_);
    }
    ALPA_RETURN_IF_ERROR(FreeSent(label));
    posted_.push_back({std::move(message), MPI_REQUEST_NULL});
    Posted& posted = posted_.back();
    return Check(label, MPI_Isend(posted.message.data(), Int(posted.message.size_bytes()), MPI_BYTE,
                                  Int(target), Int(tag), comm_, &posted.request));
  }

  Result<ir::Literal> Take(int64_t source, int64_t target, int64_t tag,
                           const ir::Shape& shape) override {
    const std::string label =
        fmt::format("message {} from device {} on device {}", tag, source, target);
    ALPA_RETURN_IF_ERROR(CheckEnds(label, source, target, target));
    ir::Literal message = ir::Literal::CreateUninitialized(shape);
    const int64_t bytes = message.size_bytes();
    std::vector<MPI_Request> request(1);
    ALPA_RETURN_IF_ERROR(Check(label, MPI_Irecv(message.data(), Int(bytes), MPI_BYTE, Int(source),
                                                Int(tag), comm_, &request[0])));
    MPI_Status status;
    const Status waited = WaitFor(label, request, options_.timeout_seconds, spin_, rank_, &status);
    if (!waited.ok()) {
      // A receive, unlike a collective, can be withdrawn: MPI no longer writes the buffer.
      MPI_Cancel(&request[0]);
      MPI_Wait(&request[0], MPI_STATUS_IGNORE);
      return waited;
    }
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (received != bytes) {
      return Internal("{}: {} bytes arrived for {} ({} bytes)", label, received, shape.ToString(),
                      bytes);
    }
    return message;
  }

  Status Flush(int64_t source) override {
    const std::string label = fmt::format("the messages device {} sent", source);
    std::vector<MPI_Request> requests;
    for (const Posted& posted : posted_) requests.push_back(posted.request);
    const Status waited = WaitFor(label, requests, options_.timeout_seconds, spin_, rank_);
    // MPI frees a completed request and nulls its handle: the posted list takes the handles back.
    auto request = requests.begin();
    for (Posted& posted : posted_) posted.request = *request++;
    if (waited.ok()) posted_.clear();
    return waited;
  }

 private:
  struct Posted {
    ir::Literal message;
    MPI_Request request;
  };

  Status CheckEnds(const std::string& label, int64_t source, int64_t target, int64_t own) const {
    if (own != rank_) return InvalidArgument("{}: device {} cannot act for it", label, rank_);
    for (int64_t device : {source, target}) {
      if (device < 0 || device >= size_) {
        return InvalidArgument("{}: there are devices 0..{}", label, size_ - 1);
      }
    }
    return Status::Ok();
  }

  // Drops the messages whose sends completed.
  Status FreeSent(const std::string& label) {
    for (auto it = posted_.begin(); it != posted_.end();) {
      int done = 0;
      ALPA_RETURN_IF_ERROR(Check(label, MPI_Test(&it->request, &done, MPI_STATUS_IGNORE)));
      it = done ? posted_.erase(it) : std::next(it);
    }
    return Status::Ok();
  }

  MPI_Comm comm_;
  MpiOptions options_;
  int64_t rank_;
  int64_t size_;
  Clock::duration spin_;
  int tag_limit_ = 0;
  std::list<Posted> posted_;  // stable addresses: MPI holds each buffer until its send completes
};

struct MpiWorld::State {
  std::unique_ptr<MpiCommunicator> communicator;
  std::unique_ptr<MpiMailbox> mailbox;
};

Result<std::unique_ptr<MpiWorld>> MpiWorld::Init(MpiOptions options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return FailedPrecondition("MPI is already initialised in this process");
  // Open MPI's non-blocking all-reduce: the ring (libnbc algorithm 1) unless the user chose. On 2
  // ranks here, 64 MiB f32 (bench/collectives/mpi_collectives_bench.cc): 1.91 GB/s against 1.22
  // for the default choice and 1.11 for the binomial tree.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    return Status(StatusCode::kInternal, "MPI_Init_thread failed");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int ranks_here = RanksOnThisHost();
  ShareTheHostsCores(ranks_here);
  const Clock::duration spin = ranks_here <= HostCores() ? kSpinWithOwnCore : kSpinSharingCores;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<MpiWorld> world(new MpiWorld());
  world->state_ = std::make_unique<State>();
  world->state_->communicator = std::make_unique<MpiCommunicator>(options, rank, size, spin);
  MPI_Comm messages = MPI_COMM_NULL;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &messages) != MPI_SUCCESS) {
    return Status(StatusCode::kInternal, "MPI_Comm_dup failed");
  }
  world->state_->mailbox = std::make_unique<MpiMailbox>(messages, options, rank, size, spin);
  return world;
}

MpiWorld::~MpiWorld() {
  state_->mailbox.reset();
  state_->communicator.reset();
  MPI_Finalize();
}

int64_t MpiWorld::rank() const { return state_->communicator->rank(); }
int64_t MpiWorld::size() const { return state_->communicator->world_size(); }
Communicator& MpiWorld::communicator() { return *state_->communicator; }
Mailbox& MpiWorld::mailbox() { return *state_->mailbox; }

void MpiWorld::Abort(const std::string& message, int exit_code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace alpa::runtime
