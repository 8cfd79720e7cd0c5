// Reading an ONNX model file (what torch.onnx.export writes) through libonnx's generated protobuf
// classes: the file parsed and checked to be a model, its opset in the range the import knows,
// and every initializer's values, inline or in an external file beside the model (PyTorch stores
// a model over 2 GiB that way). Values are read only when asked for, so planning a large model
// never loads its weights.
#ifndef ALPA_ONNX_ONNX_FILE_H_
#define ALPA_ONNX_ONNX_FILE_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "ir/dtype.h"
#include "ir/literal.h"
#include "ir/shape.h"
#include "support/status.h"

namespace alpa::onnx {

// The opsets of the default domain the import is checked against (torch.onnx.export's range
// for training exports in PyTorch 1.13 to 2.x).
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 17;

struct OnnxFile {
  std::string path;                 // as given, for messages
  std::filesystem::path directory;  // where external data files are looked up
  ::onnx::ModelProto model;
  int64_t opset = 0;  // of the default domain ("" or "ai.onnx")
};

// Reads and checks `path`: a file that is not an ONNX model (or is truncated), an opset outside
// [kMinOpset, kMaxOpset], and an initializer whose external data file is missing or too short
// are errors naming the file and what to do.
Result<OnnxFile> ReadOnnxFile(const std::string& path);

// Checks a parsed model as ReadOnnxFile does (the opset, external data under `directory`);
// `path` names it in messages.
Result<OnnxFile> CheckOnnxModel(::onnx::ModelProto model, const std::string& path,
                                const std::filesystem::path& directory);

// Our dtype of an ONNX TensorProto.DataType; `what` names the value for the error.
Result<ir::DType> ElementType(int32_t onnx_type, const std::string& what);

// The shape of an initializer or a Constant's tensor.
Result<ir::Shape> TensorShape(const ::onnx::TensorProto& tensor);

// The values of `tensor`: raw_data, the typed fields, or its external data file (relative to
// `directory`). The error names the tensor.
Result<ir::Literal> TensorValue(const ::onnx::TensorProto& tensor,
                                const std::filesystem::path& directory);

}  // namespace alpa::onnx

#endif  // ALPA_ONNX_ONNX_FILE_H_
