#include "onnx/onnx_file.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <map>

namespace alpa::onnx {
namespace {

using ::onnx::TensorProto;

// The external data fields of `tensor`: location (a path relative to the model), offset and
// length in bytes (length 0: to the end of the file).
struct ExternalData {
  std::string location;
  int64_t offset = 0;
  int64_t length = 0;
};

Result<ExternalData> ReadExternalData(const TensorProto& tensor) {
  ExternalData data;
  for (const ::onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") data.location = entry.value();
    if (entry.key() == "offset") data.offset = std::stoll(entry.value());
    if (entry.key() == "length") data.length = std::stoll(entry.value());
  }
  if (data.location.empty()) {
    return InvalidArgument("initializer '{}' says its data is external but names no location",
                           tensor.name());
  }
  return data;
}

// Checks that the external file of `tensor` exists and holds its bytes; returns the file's path.
Result<std::filesystem::path> CheckExternalData(const TensorProto& tensor,
                                                const std::filesystem::path& directory,
                                                int64_t bytes) {
  ALPA_ASSIGN_OR_RETURN(ExternalData data, ReadExternalData(tensor));
  const std::filesystem::path file = directory / data.location;
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  if (error) {
    return InvalidArgument(
        "initializer '{}': its external data file {} is missing ({}); keep the files PyTorch "
        "wrote beside the model",
        tensor.name(), file.string(), error.message());
  }
  const int64_t length = data.length > 0 ? data.length : static_cast<int64_t>(size) - data.offset;
  if (length != bytes || data.offset + length > static_cast<int64_t>(size)) {
    return InvalidArgument(
        "initializer '{}': {} holds {} bytes, too few for {} bytes at offset {}; the file is "
        "truncated or belongs to another export",
        tensor.name(), file.string(), size, bytes, data.offset);
  }
  return file;
}

bool IsExternal(const TensorProto& tensor) {
  return tensor.data_location() == TensorProto::EXTERNAL;
}

}  // namespace

Result<ir::DType> ElementType(int32_t onnx_type, const std::string& what) {
  static const std::map<int32_t, ir::DType> kTypes = {
      {TensorProto::FLOAT, ir::DType::kF32},   {TensorProto::DOUBLE, ir::DType::kF64},
      {TensorProto::FLOAT16, ir::DType::kF16}, {TensorProto::BFLOAT16, ir::DType::kBF16},
      {TensorProto::INT64, ir::DType::kS64},   {TensorProto::INT32, ir::DType::kS32},
      {TensorProto::INT16, ir::DType::kS16},   {TensorProto::INT8, ir::DType::kS8},
      {TensorProto::UINT8, ir::DType::kU8},    {TensorProto::BOOL, ir::DType::kPred}};
  auto it = kTypes.find(onnx_type);
  if (it == kTypes.end()) {
    return Unimplemented("{} has ONNX element type {} ({}), which the import does not support",
                         what, TensorProto::DataType_Name(onnx_type), onnx_type);
  }
  return it->second;
}

Result<ir::Shape> TensorShape(const TensorProto& tensor) {
  ALPA_ASSIGN_OR_RETURN(ir::DType dtype,
                        ElementType(tensor.data_type(), fmt::format("tensor '{}'", tensor.name())));
  return ir::Shape::Array(dtype, {tensor.dims().begin(), tensor.dims().end()});
}

Result<ir::Literal> TensorValue(const TensorProto& tensor, const std::filesystem::path& directory) {
  ALPA_ASSIGN_OR_RETURN(ir::Shape shape, TensorShape(tensor));
  ir::Literal literal = ir::Literal::CreateZeros(shape);
  const auto bytes = static_cast<size_t>(literal.size_bytes());
  const auto count = static_cast<size_t>(literal.element_count());
  auto wrong_size = [&](size_t given) {
    return InvalidArgument("tensor '{}' of shape {} holds {} values; it needs {}", tensor.name(),
                           shape.ToString(), given, count);
  };
  if (IsExternal(tensor)) {
    ALPA_ASSIGN_OR_RETURN(std::filesystem::path file,
                          CheckExternalData(tensor, directory, static_cast<int64_t>(bytes)));
    ALPA_ASSIGN_OR_RETURN(ExternalData data, ReadExternalData(tensor));
    std::ifstream in(file, std::ios::binary);
    in.seekg(data.offset);
    in.read(reinterpret_cast<char*>(literal.data()), static_cast<std::streamsize>(bytes));
    if (!in) return InvalidArgument("tensor '{}': reading {} failed", tensor.name(), file.string());
    return literal;
  }
  if (tensor.has_raw_data()) {
    // raw_data is little-endian, as our literals are on the machines we run on.
    if (tensor.raw_data().size() != bytes) {
      return wrong_size(tensor.raw_data().size() /
                        static_cast<size_t>(ir::DTypeByteSize(shape.dtype())));
    }
    std::memcpy(literal.data(), tensor.raw_data().data(), bytes);
    return literal;
  }
  // The typed fields: floats for f32, int64s for s64, doubles for f64, and int32s for the
  // narrower types (f16 and bf16 as their bits).
  auto copy = [&](const auto& field) -> Status {
    if (static_cast<size_t>(field.size()) != count) return wrong_size(field.size());
    for (size_t i = 0; i < count; ++i) {
      const auto value = field[static_cast<int>(i)];
      if (shape.dtype() == ir::DType::kF16 || shape.dtype() == ir::DType::kBF16) {
        const auto bits = static_cast<uint16_t>(value);
        std::memcpy(literal.data() + 2 * i, &bits, 2);
      } else if (ir::IsFloating(shape.dtype())) {
        literal.SetDouble(static_cast<int64_t>(i), static_cast<double>(value));
      } else {
        literal.SetInt(static_cast<int64_t>(i), static_cast<int64_t>(value));
      }
    }
    return Status::Ok();
  };
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      ALPA_RETURN_IF_ERROR(copy(tensor.float_data()));
      break;
    case TensorProto::DOUBLE:
      ALPA_RETURN_IF_ERROR(copy(tensor.double_data()));
      break;
    case TensorProto::INT64:
      ALPA_RETURN_IF_ERROR(copy(tensor.int64_data()));
      break;
    default:
      ALPA_RETURN_IF_ERROR(copy(tensor.int32_data()));
      break;
  }
  return literal;
}

Result<OnnxFile> ReadOnnxFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("{}: cannot open the file", path);
  ::onnx::ModelProto model;
  if (!model.ParseFromIstream(&in) || !model.has_graph() || model.ir_version() == 0) {
    return InvalidArgument(
        "{}: not an ONNX model (the file does not parse as an ONNX ModelProto, or is "
        "truncated); export it again with torch.onnx.export",
        path);
  }
  return CheckOnnxModel(std::move(model), path, std::filesystem::path(path).parent_path());
}

Result<OnnxFile> CheckOnnxModel(::onnx::ModelProto model, const std::string& path,
                                const std::filesystem::path& directory) {
  OnnxFile file;
  file.path = path;
  file.directory = directory;
  file.model = std::move(model);
  file.opset = -1;
  for (const ::onnx::OperatorSetIdProto& opset : file.model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") file.opset = opset.version();
  }
  if (file.opset < kMinOpset || file.opset > kMaxOpset) {
    return InvalidArgument(
        "{}: opset {} of the default domain is outside what the import supports ({} to {}); "
        "export with torch.onnx.export(..., opset_version={})",
        path, file.opset, kMinOpset, kMaxOpset, kMaxOpset);
  }
  for (const TensorProto& initializer : file.model.graph().initializer()) {
    if (!IsExternal(initializer)) continue;
    ALPA_ASSIGN_OR_RETURN(ir::Shape shape, TensorShape(initializer));
    Result<std::filesystem::path> checked =
        CheckExternalData(initializer, file.directory, shape.ByteSize());
    if (!checked.ok()) return checked.status().WithContext(path);
  }
  return file;
}

}  // namespace alpa::onnx
