#include "api/batch_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "api/array_file.h"
#include "models/forward_loss.h"

namespace alpa::api {
namespace {

// The parameter's name without JAX's ".N" suffix: x.1 -> x.
std::string WithoutSuffix(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<int64_t>(dot) + 1, name.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, dot) : name;
}

// `array` as `dtype` (see batch_file.h for what converts); `where` names it in errors.
Result<ir::Literal> Convert(const ir::Literal& array, ir::DType dtype, const std::string& where) {
  const ir::DType from = array.shape().dtype();
  if (from == dtype) return ir::Literal(array);
  const bool from_float = ir::IsFloating(from);
  if (from_float && !ir::IsFloating(dtype)) {
    return InvalidArgument(
        "{} is {}, and the parameter is {}: ids and labels must be integers "
        "(array.astype(np.int32))",
        where, ir::DTypeName(from), ir::DTypeName(dtype));
  }
  ir::Literal converted =
      ir::Literal::CreateUninitialized(ir::Shape::Array(dtype, array.shape().dims()));
  for (int64_t i = 0; i < array.element_count(); ++i) {
    if (from_float || ir::IsFloating(dtype)) {
      converted.SetDouble(i,
                          from_float ? array.GetDouble(i) : static_cast<double>(array.GetInt(i)));
      continue;
    }
    const int64_t value = array.GetInt(i);
    converted.SetInt(i, value);
    if (converted.GetInt(i) != value) {
      return InvalidArgument("{}: element {} ({}) does not fit the parameter's {}", where, i, value,
                             ir::DTypeName(dtype));
    }
  }
  return converted;
}

// Refuses ids at or above the table `bound` they index (0: no table).
Status CheckIds(const ir::Literal& array, int64_t bound, const std::string& where) {
  if (bound <= 0 || !ir::IsInteger(array.shape().dtype())) return Status::Ok();
  const int64_t row_elements =
      array.shape().rank() == 0
          ? 1
          : array.element_count() / std::max<int64_t>(1, array.shape().dim(0));
  for (int64_t i = 0; i < array.element_count(); ++i) {
    const int64_t id = array.GetInt(i);
    if (id < 0 || id >= bound) {
      return InvalidArgument(
          "{}: id {} in row {} is outside 0..{}, the rows of the table the "
          "model indexes with it",
          where, id, i / std::max<int64_t>(1, row_elements), bound - 1);
    }
  }
  return Status::Ok();
}

// The file's arrays by parameter, checked and converted.
struct Matched {
  std::vector<std::shared_ptr<const ir::Literal>> arrays;  // one per batch parameter, in order
  int64_t rows = 0;                                        // of every array
};

std::string Describe(const std::vector<const ir::Instruction*>& batch) {
  std::vector<std::string> items;
  for (const ir::Instruction* parameter : batch) {
    items.push_back(fmt::format("{} ({})", parameter->name(), parameter->shape().ToString(false)));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

Result<Matched> Match(const std::string& path, std::vector<NamedArray> arrays,
                      const ir::Computation& loss, const std::vector<const ir::Instruction*>& batch,
                      int64_t rows_per_step) {
  std::map<std::string, size_t> by_name;
  std::vector<std::string> names;
  for (size_t a = 0; a < arrays.size(); ++a) {
    by_name[arrays[a].name] = a;
    names.push_back(arrays[a].name);
  }
  Matched matched;
  std::vector<bool> used(arrays.size(), false);
  for (const ir::Instruction* parameter : batch) {
    auto found = by_name.find(parameter->name());
    if (found == by_name.end()) found = by_name.find(WithoutSuffix(parameter->name()));
    if (found == by_name.end() && arrays.size() == 1 && batch.size() == 1) found = by_name.begin();
    if (found == by_name.end()) {
      return InvalidArgument(
          "{}: no array for the batch parameter {}; the file has {}, and the "
          "model's batch is {}",
          path, parameter->name(), fmt::join(names, ", "), Describe(batch));
    }
    used[found->second] = true;
    const NamedArray& named = arrays[found->second];
    const std::string where =
        fmt::format("{}: array {} (for parameter {})", path, named.name, parameter->name());
    const ir::Shape& want = parameter->shape();
    const ir::Shape& have = named.value.shape();
    const bool same_row =
        want.rank() > 0 && have.rank() == want.rank() &&
        std::equal(want.dims().begin() + 1, want.dims().end(), have.dims().begin() + 1);
    if (!same_row) {
      return InvalidArgument(
          "{} is {}; it must be [rows, {}] as the parameter's {} (rows: a "
          "multiple of the {} of one step)",
          where, have.ToString(false),
          fmt::join(want.dims().begin() + std::min<int64_t>(1, want.rank()), want.dims().end(),
                    ", "),
          want.ToString(false), rows_per_step);
    }
    const int64_t rows = have.dim(0);
    if (rows == 0 || rows % rows_per_step != 0) {
      return InvalidArgument(
          "{} has {} rows, not a multiple of the {} rows of one step (the "
          "global batch)",
          where, rows, rows_per_step);
    }
    if (matched.rows != 0 && rows != matched.rows) {
      return InvalidArgument("{} has {} rows, and the arrays before it {}: each row is one example",
                             where, rows, matched.rows);
    }
    matched.rows = rows;
    ALPA_ASSIGN_OR_RETURN(ir::Literal value, Convert(named.value, want.dtype(), where));
    ALPA_RETURN_IF_ERROR(CheckIds(value, models::IndexBound(loss, *parameter), where));
    matched.arrays.push_back(std::make_shared<const ir::Literal>(std::move(value)));
  }
  for (size_t a = 0; a < arrays.size(); ++a) {
    if (used[a]) continue;
    return InvalidArgument("{}: array {} feeds no batch parameter; the model's batch is {}", path,
                           arrays[a].name, Describe(batch));
  }
  return matched;
}

// `rows` rows of `array` from row `first` on, wrapping around its end.
ir::Literal Rows(const ir::Literal& array, int64_t first, int64_t rows) {
  std::vector<int64_t> dims = array.shape().dims();
  const int64_t total = dims[0];
  const int64_t row_bytes = total == 0 ? 0 : array.size_bytes() / total;
  dims[0] = rows;
  ir::Literal block =
      ir::Literal::CreateUninitialized(ir::Shape::Array(array.shape().dtype(), dims));
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(block.data() + r * row_bytes, array.data() + ((first + r) % total) * row_bytes,
                static_cast<size_t>(row_bytes));
  }
  return block;
}

}  // namespace

Result<models::BatchGenerator> BatchesFromFile(const std::string& path, const ir::Computation& loss,
                                               const std::vector<int64_t>& weights,
                                               int64_t rows_per_step) {
  std::vector<const ir::Instruction*> batch;
  const std::vector<ir::Instruction*> parameters = loss.parameters();
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (std::find(weights.begin(), weights.end(), static_cast<int64_t>(p)) == weights.end()) {
      batch.push_back(parameters[p]);
    }
  }
  ALPA_ASSIGN_OR_RETURN(std::vector<NamedArray> arrays, ReadArrayFile(path));
  ALPA_ASSIGN_OR_RETURN(Matched matched,
                        Match(path, std::move(arrays), loss, batch, rows_per_step));
  return models::BatchGenerator([matched = std::move(matched)](int64_t rows, uint64_t seed) {
    const int64_t blocks = std::max<int64_t>(1, matched.rows / std::max<int64_t>(1, rows));
    const int64_t first = static_cast<int64_t>(seed % static_cast<uint64_t>(blocks)) * rows;
    std::vector<ir::Literal> values;
    for (const auto& array : matched.arrays) values.push_back(Rows(*array, first, rows));
    return values;
  });
}

}  // namespace alpa::api
