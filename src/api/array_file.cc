#include "api/array_file.h"

#include <zip.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "checkpoint/tile_file.h"
#include "support/file.h"

namespace alpa::api {
namespace {

using ir::DType;

std::string Extension(const std::string& path) {
  return std::filesystem::path(path).extension().string();
}

// Builds the array from `data` (its bytes, little-endian and row-major) after checking the size.
Result<ir::Literal> ArrayFromBytes(DType dtype, std::vector<int64_t> dims, std::string_view data,
                                   const std::string& where) {
  const ir::Shape shape = ir::Shape::Array(dtype, std::move(dims));
  // Counted before allocating, so that a corrupt shape is an error and not a huge allocation.
  const auto element_bytes = static_cast<uint64_t>(ir::DTypeByteSize(dtype));
  const uint64_t most = data.size() / element_bytes;  // elements the data could hold
  uint64_t elements = 1;
  bool too_many = false;
  for (int64_t dim : shape.dims()) {
    if (dim == 0) elements = 0;
    too_many = too_many || (elements > 0 && static_cast<uint64_t>(dim) > most / elements);
    if (!too_many) elements *= static_cast<uint64_t>(dim);
  }
  if (elements == 0) too_many = false;
  if (too_many || elements * element_bytes != data.size()) {
    return InvalidArgument(
        "{}: {} holds {} bytes of data, which its shape does not fit; the "
        "file is truncated or not what its header says",
        where, shape.ToString(), data.size());
  }
  ir::Literal array = ir::Literal::CreateUninitialized(shape);
  if (!data.empty()) std::memcpy(array.data(), data.data(), data.size());
  return array;
}

// --- .npy (NEP 1) ----------------------------------------------------------------------------

// The type a NumPy descr ('<f4', '|u1', '|b1') names.
Result<DType> NpyDType(const std::string& descr, const std::string& where) {
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"f2", DType::kF16}, {"f4", DType::kF32}, {"f8", DType::kF64}, {"i1", DType::kS8},
      {"i2", DType::kS16}, {"i4", DType::kS32}, {"i8", DType::kS64}, {"u1", DType::kU8},
      {"u2", DType::kU16}, {"u4", DType::kU32}, {"u8", DType::kU64}, {"b1", DType::kPred}};
  if (descr.size() == 3) {
    const char order = descr[0];
    for (const auto& [code, dtype] : kTypes) {
      if (descr.substr(1) != code) continue;
      if (order == '>' && ir::DTypeByteSize(dtype) > 1) {
        return InvalidArgument(
            "{}: dtype '{}' is big-endian; save it little-endian "
            "(array.astype('<{}'))",
            where, descr, code);
      }
      if (order == '<' || order == '|' || order == '=' || order == '>') return dtype;
    }
  }
  return InvalidArgument(
      "{}: dtype '{}' is not one a batch can hold (floats of 16 to 64 bits, integers, bool); "
      "convert it, e.g. array.astype(np.float32)",
      where, descr);
}

// The value after `'key':` in the header's dict literal, up to its end (a quoted string, a
// parenthesised tuple, or a bare word).
Result<std::string_view> DictValue(std::string_view header, std::string_view key,
                                   const std::string& where) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) {
    return InvalidArgument("{}: the .npy header has no '{}': {}", where, key, header);
  }
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) {
    return InvalidArgument("{}: the .npy header is malformed: {}", where, header);
  }
  at = header.find_first_not_of(' ', at + 1);
  if (at == std::string_view::npos) {
    return InvalidArgument("{}: the .npy header is malformed: {}", where, header);
  }
  const char open = header[at];
  const char close = open == '\'' ? '\'' : open == '(' ? ')' : open == '[' ? ']' : '\0';
  const size_t end = close == '\0' ? header.find_first_of(",}", at) : header.find(close, at + 1);
  if (end == std::string_view::npos) {
    return InvalidArgument("{}: the .npy header is malformed: {}", where, header);
  }
  return header.substr(at, close == '\0' ? end - at : end - at + 1);
}

Result<std::vector<int64_t>> NpyShape(std::string_view tuple, const std::string& where) {
  std::vector<int64_t> dims;
  std::string_view rest = tuple.substr(1, tuple.size() - 2);  // inside the parentheses
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == 'L')) item.remove_suffix(1);
    if (!item.empty()) {
      int64_t dim = 0;
      for (char c : item) {
        if (c < '0' || c > '9') {
          return InvalidArgument("{}: the .npy shape {} is not a tuple of sizes", where, tuple);
        }
        dim = dim * 10 + (c - '0');
      }
      dims.push_back(dim);
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return dims;
}

// The unsigned integer `bytes` hold, least significant first (the .npy and .safetensors header
// lengths).
uint64_t LittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

Result<ir::Literal> ParseNpy(std::string_view bytes, const std::string& where) {
  constexpr std::string_view kMagic = "\x93NUMPY";
  if (bytes.substr(0, kMagic.size()) != kMagic || bytes.size() < 10) {
    return InvalidArgument("{}: not a .npy array (no \\x93NUMPY magic); save it with np.save",
                           where);
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) {
    return InvalidArgument("{}: .npy format version {} is not 1, 2 or 3", where, major);
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_bytes;
  if (bytes.size() < header_start) return InvalidArgument("{}: the .npy file is truncated", where);
  const size_t header_length = LittleEndian(bytes.substr(8, length_bytes));
  if (bytes.size() < header_start + header_length) {
    return InvalidArgument("{}: the .npy header is truncated", where);
  }
  const std::string_view header = bytes.substr(header_start, header_length);
  ALPA_ASSIGN_OR_RETURN(std::string_view descr, DictValue(header, "descr", where));
  if (descr.size() < 2 || descr.front() != '\'') {
    return InvalidArgument("{}: dtype {} is structured; save plain arrays, one per name", where,
                           descr);
  }
  ALPA_ASSIGN_OR_RETURN(DType dtype,
                        NpyDType(std::string(descr.substr(1, descr.size() - 2)), where));
  ALPA_ASSIGN_OR_RETURN(std::string_view fortran, DictValue(header, "fortran_order", where));
  if (fortran != "False") {
    return InvalidArgument("{}: the array is Fortran-ordered; save np.ascontiguousarray(array)",
                           where);
  }
  ALPA_ASSIGN_OR_RETURN(std::string_view shape, DictValue(header, "shape", where));
  ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> dims, NpyShape(shape, where));
  return ArrayFromBytes(dtype, std::move(dims), bytes.substr(header_start + header_length), where);
}

// --- .npz (libzip) ---------------------------------------------------------------------------

Result<std::vector<NamedArray>> ReadNpz(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error),
                                                         &zip_discard);
  if (archive == nullptr) {
    zip_error_t reason;
    zip_error_init_with_code(&reason, error);
    Status status =
        InvalidArgument("{}: not a readable .npz archive: {}", path, zip_error_strerror(&reason));
    zip_error_fini(&reason);
    return status;
  }
  std::vector<NamedArray> arrays;
  const zip_int64_t members = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t m = 0; m < members; ++m) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), m, 0, &stat) != 0) {
      return InvalidArgument("{}: member {} cannot be read: {}", path, m,
                             zip_strerror(archive.get()));
    }
    std::string name = stat.name;
    const std::string where = fmt::format("{}: {}", path, name);
    std::string bytes(stat.size, '\0');
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> member(zip_fopen_index(archive.get(), m, 0),
                                                              &zip_fclose);
    if (member == nullptr ||
        zip_fread(member.get(), bytes.data(), stat.size) != static_cast<zip_int64_t>(stat.size)) {
      return InvalidArgument("{}: cannot be read: {}", where, zip_strerror(archive.get()));
    }
    ALPA_ASSIGN_OR_RETURN(ir::Literal value, ParseNpy(bytes, where));
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    arrays.push_back({std::move(name), std::move(value)});
  }
  return arrays;
}

// --- .safetensors ------------------------------------------------------------------------------

Result<DType> SafetensorsDType(const std::string& text, const std::string& where) {
  if (const std::optional<DType> dtype = checkpoint::DTypeOfSafetensorsName(text)) return *dtype;
  return InvalidArgument(
      "{}: dtype {} is not one a batch can hold (F16, BF16, F32, F64, I8-I64, "
      "U8-U64, BOOL)",
      where, text);
}

Result<std::vector<NamedArray>> ReadSafetensors(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  if (bytes.size() < 8) return InvalidArgument("{}: too short for a .safetensors file", path);
  const uint64_t header_length = LittleEndian(std::string_view(bytes).substr(0, 8));
  if (header_length > bytes.size() - 8) {
    return InvalidArgument("{}: the header length {} runs past the file's {} bytes", path,
                           header_length, bytes.size());
  }
  const nlohmann::json header = nlohmann::json::parse(
      bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(header_length), nullptr,
      /*allow_exceptions=*/false);
  if (!header.is_object()) {
    return InvalidArgument("{}: the header is not a JSON object; not a .safetensors file", path);
  }
  const std::string_view data = std::string_view(bytes).substr(8 + header_length);
  std::vector<NamedArray> arrays;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = fmt::format("{}: {}", path, name);
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2) {
      return InvalidArgument("{}: the entry needs dtype, shape and data_offsets [begin, end]: {}",
                             where, entry.dump());
    }
    ALPA_ASSIGN_OR_RETURN(DType dtype, SafetensorsDType(entry["dtype"], where));
    std::vector<int64_t> dims;
    for (const nlohmann::json& dim : entry["shape"]) {
      if (!dim.is_number_unsigned()) {
        return InvalidArgument("{}: shape {} is not a list of sizes", where, entry["shape"].dump());
      }
      dims.push_back(dim.get<int64_t>());
    }
    const nlohmann::json& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned() ||
        offsets[0].get<uint64_t>() > offsets[1].get<uint64_t>() ||
        offsets[1].get<uint64_t>() > data.size()) {
      return InvalidArgument("{}: data_offsets {} fall outside the {} bytes of data", where,
                             offsets.dump(), data.size());
    }
    const uint64_t begin = offsets[0].get<uint64_t>();
    ALPA_ASSIGN_OR_RETURN(
        ir::Literal value,
        ArrayFromBytes(dtype, std::move(dims),
                       data.substr(begin, offsets[1].get<uint64_t>() - begin), where));
    arrays.push_back({name, std::move(value)});
  }
  return arrays;
}

}  // namespace

bool IsArrayFilePath(const std::string& path) {
  const std::string extension = Extension(path);
  return extension == ".npy" || extension == ".npz" || extension == ".safetensors";
}

Result<std::vector<NamedArray>> ReadArrayFile(const std::string& path) {
  const std::string extension = Extension(path);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    return NotFound("{}: no such file", path);
  }
  if (extension == ".npz") return ReadNpz(path);
  if (extension == ".safetensors") return ReadSafetensors(path);
  if (extension != ".npy") {
    return InvalidArgument(
        "{}: not an array file; use .npy (np.save), .npz (np.savez) or "
        ".safetensors",
        path);
  }
  ALPA_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  ALPA_ASSIGN_OR_RETURN(ir::Literal value, ParseNpy(bytes, path));
  std::vector<NamedArray> arrays;
  arrays.push_back({std::filesystem::path(path).stem().string(), std::move(value)});
  return arrays;
}

}  // namespace alpa::api
