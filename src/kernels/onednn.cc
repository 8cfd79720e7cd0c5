#include "kernels/onednn.h"

#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace alpa::kernels::internal {
namespace {

using Dims = dnnl::memory::dims;

// The CPU engine, created once with verbosity off. Never destroyed: kernels may run from
// thread-exit or static-destruction paths, and the engine must outlive every stream.
const dnnl::engine& Engine() {
  static const dnnl::engine* const engine = [] {
    dnnl::set_verbose(0);
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *engine;
}

// One stream and one scratchpad buffer per calling thread: streams are not thread-safe, and the
// user-managed scratchpad makes a shared primitive safe to run from several threads at once.
struct ThreadState {
  dnnl::stream stream{Engine()};
  std::vector<uint8_t> scratchpad;
};
ThreadState& ThisThread() {
  thread_local ThreadState state;
  return state;
}

struct CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad_desc;
};

// Primitives keyed by the problem: {kind, sizes...}. A null entry records a rejection.
class PrimitiveCache {
 public:
  template <typename Create>
  std::shared_ptr<const CachedPrimitive> GetOrCreate(const std::vector<int64_t>& key,
                                                     Create&& create) {
    // Creation happens under the lock: it is a one-time JIT cost per shape, and holding the lock
    // keeps two threads from compiling the same primitive twice.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    std::shared_ptr<const CachedPrimitive> created;
    try {
      created = std::make_shared<const CachedPrimitive>(create());
    } catch (const dnnl::error&) {
      created = nullptr;  // unsupported by oneDNN: the caller falls back
    }
    entries_.emplace(key, created);
    return created;
  }

  int64_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(entries_.size());
  }

 private:
  std::mutex mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<const CachedPrimitive>> entries_;
};

PrimitiveCache& Cache() {
  static PrimitiveCache* const cache = new PrimitiveCache();
  return *cache;
}

enum PrimitiveKind : int64_t { kMatMul = 0, kConvolution = 1 };

// oneDNN's name for the floating types it may run; nothing for the others.
std::optional<dnnl::memory::data_type> OneDnnType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32:
      return dnnl::memory::data_type::f32;
    case ir::DType::kF16:
      return dnnl::memory::data_type::f16;
    case ir::DType::kBF16:
      return dnnl::memory::data_type::bf16;
    default:
      return std::nullopt;
  }
}

// Row-major (dense, last dimension fastest) memory descriptor for `dims` of `type`.
dnnl::memory::desc RowMajor(const Dims& dims, dnnl::memory::data_type type) {
  Dims strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return dnnl::memory::desc(dims, type, strides);
}

// The descriptor of [batch, rows, cols] matrices of `type`, each row-major or stored transposed
// (cols x rows): the same dimensions, their two inner strides swapped.
dnnl::memory::desc Matrices(int64_t batch, int64_t rows, int64_t cols, MatrixLayout layout,
                            dnnl::memory::data_type type) {
  const Dims strides =
      layout == MatrixLayout::kRowMajor ? Dims{rows * cols, cols, 1} : Dims{rows * cols, 1, rows};
  return dnnl::memory::desc({batch, rows, cols}, type, strides);
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// One argument of a primitive: its oneDNN id (DNNL_ARG_*), layout and caller-owned buffer.
struct Arg {
  int id;
  dnnl::memory::desc desc;
  const void* data;
};

// Runs `cached` on the caller's buffers (wrapped, not copied) with this thread's stream and
// scratchpad.
Status Execute(const CachedPrimitive& cached, const std::vector<Arg>& buffers) {
  try {
    ThreadState& thread = ThisThread();  // first use creates the stream, which may throw
    std::unordered_map<int, dnnl::memory> args;
    for (const Arg& arg : buffers) {
      // oneDNN never writes its source and weights arguments; the cast is for its API only.
      args.emplace(arg.id, dnnl::memory(arg.desc, Engine(), const_cast<void*>(arg.data)));
    }
    const size_t scratch_bytes = cached.scratchpad_desc.get_size();
    if (thread.scratchpad.size() < scratch_bytes) thread.scratchpad.resize(scratch_bytes);
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(cached.scratchpad_desc, Engine(), thread.scratchpad.data()));
    cached.primitive.execute(thread.stream, args);
    thread.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN execution failed: {} (status {})", e.what(),
                    static_cast<int>(e.status));
  }
  return Status::Ok();
}

}  // namespace

Status OneDnnMatMul(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                    const void* b, void* c, MatrixLayout a_layout, MatrixLayout b_layout) {
  const std::optional<dnnl::memory::data_type> type = OneDnnType(dtype);
  if (!type) return Unimplemented("oneDNN has no {} matmul", ir::DTypeName(dtype));
  const dnnl::memory::desc a_md = Matrices(batch, m, k, a_layout, *type);
  const dnnl::memory::desc b_md = Matrices(batch, k, n, b_layout, *type);
  const dnnl::memory::desc c_md = RowMajor({batch, m, n}, *type);
  const std::vector<int64_t> key = {kMatMul,
                                    static_cast<int64_t>(dtype),
                                    batch,
                                    m,
                                    k,
                                    n,
                                    static_cast<int64_t>(a_layout),
                                    static_cast<int64_t>(b_layout)};
  std::shared_ptr<const CachedPrimitive> cached =
      Cache().GetOrCreate(key, [&] {
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), UserScratchpad(),
                                        Engine());
        return CachedPrimitive{dnnl::matmul(pd), pd.scratchpad_desc()};
      });
  if (cached == nullptr) {
    return Unimplemented("oneDNN has no {} matmul for {}x{}x{}x{} on this CPU",
                         ir::DTypeName(dtype), batch, m, k, n);
  }
  return Execute(*cached,
                 {{DNNL_ARG_SRC, a_md, a}, {DNNL_ARG_WEIGHTS, b_md, b}, {DNNL_ARG_DST, c_md, c}});
}

Status OneDnnConvolution(ir::DType dtype, const ConvolutionParams& params, const void* input,
                         const void* kernel, void* output) {
  const std::optional<dnnl::memory::data_type> type = OneDnnType(dtype);
  if (!type) return Unimplemented("oneDNN has no {} convolution", ir::DTypeName(dtype));
  const int64_t groups = params.feature_group_count;
  Dims src_dims = {params.batch, params.input_features};
  Dims dst_dims = {params.batch, params.output_features};
  // Grouped weights [G, C_out/G, C_in/G, K...] share the memory of our [C_out, C_in/G, K...].
  Dims weight_dims = {params.output_features, params.input_features / groups};
  if (groups > 1) weight_dims = {groups, params.output_features / groups, weight_dims[1]};
  Dims strides, dilates, pad_l, pad_r;
  for (size_t d = 0; d < params.input_spatial.size(); ++d) {
    src_dims.push_back(params.input_spatial[d]);
    dst_dims.push_back(params.output_spatial[d]);
    weight_dims.push_back(params.kernel_spatial[d]);
    strides.push_back(params.strides[d]);
    dilates.push_back(params.rhs_dilation[d] - 1);  // oneDNN counts the holes, XLA the step
    pad_l.push_back(params.pad_low[d]);
    pad_r.push_back(params.pad_high[d]);
  }
  const dnnl::memory::desc src_md = RowMajor(src_dims, *type);
  const dnnl::memory::desc weight_md = RowMajor(weight_dims, *type);
  const dnnl::memory::desc dst_md = RowMajor(dst_dims, *type);

  std::vector<int64_t> key = {kConvolution, static_cast<int64_t>(dtype), groups};
  for (const Dims* dims :
       {&src_dims, &weight_dims, &dst_dims, &strides, &dilates, &pad_l, &pad_r}) {
    key.push_back(static_cast<int64_t>(dims->size()));
    key.insert(key.end(), dims->begin(), dims->end());
  }
  std::shared_ptr<const CachedPrimitive> cached = Cache().GetOrCreate(key, [&] {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src_md, weight_md,
                                         dst_md, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
    return CachedPrimitive{dnnl::convolution_forward(pd), pd.scratchpad_desc()};
  });
  if (cached == nullptr) {
    return Unimplemented("oneDNN has no {} convolution for this problem on this CPU",
                         ir::DTypeName(dtype));
  }
  return Execute(*cached, {{DNNL_ARG_SRC, src_md, input},
                           {DNNL_ARG_WEIGHTS, weight_md, kernel},
                           {DNNL_ARG_DST, dst_md, output}});
}

int64_t OneDnnCacheSize() { return Cache().size(); }

}  // namespace alpa::kernels::internal
