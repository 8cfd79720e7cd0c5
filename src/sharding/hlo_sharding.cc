#include "sharding/hlo_sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <utility>

namespace alpa::sharding {
namespace {

int64_t Product(const std::vector<int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{1}, std::multiplies<>());
}

bool IsPermutation(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The canonical iota form of a device array, if it is one: the reshape dims and the permutation
// (empty for the identity, whose reshape is then [N]).
struct Iota {
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> perm;
};

// A transposed iota read row-major is a mixed-radix count: position p = sum_k o_k * P_k (P_k
// the product of the output sizes inside k) holds sum_k o_k * s_k, s_k the row-major stride of
// output dimension k in the reshape. So, innermost first, each dimension is the longest run of
// equal steps s over the starts of the blocks found so far (devices[j * P]); two dimensions
// that merge (s_outer = n_inner * s_inner) give one longer run, which is the canonical form.
// Sorted by decreasing stride the dimensions must then chain row-major (s = 1 last, each stride
// the next one's times its size): those sizes are the reshape, and their order the permutation.
std::optional<Iota> FindIota(const std::vector<int64_t>& devices) {
  const auto n = static_cast<int64_t>(devices.size());
  if (n == 0 || devices[0] != 0) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, stride), innermost first
  for (int64_t inner = 1; inner < n;) {
    const int64_t blocks = n / inner;
    auto start = [&](int64_t j) { return devices[static_cast<size_t>(j * inner)]; };
    const int64_t step = start(1) - start(0);
    if (step <= 0) return std::nullopt;
    int64_t run = 2;
    while (run < blocks && start(run) == start(0) + run * step) ++run;
    if (blocks % run != 0) return std::nullopt;
    dims.emplace_back(run, step);
    inner *= run;
  }
  std::vector<size_t> by_stride(dims.size());  // indices into dims, largest stride first
  std::iota(by_stride.begin(), by_stride.end(), 0);
  std::sort(by_stride.begin(), by_stride.end(),
            [&](size_t x, size_t y) { return dims[x].second > dims[y].second; });
  Iota iota;
  int64_t stride = 1;
  for (size_t k = by_stride.size(); k-- > 0;) {
    if (dims[by_stride[k]].second != stride) return std::nullopt;
    stride *= dims[by_stride[k]].first;
  }
  for (size_t index : by_stride) iota.reshape_dims.push_back(dims[index].first);
  // Output dimensions are the found ones outermost first; perm[k] is its place in the reshape.
  for (size_t k = dims.size(); k-- > 0;) {
    const auto place = std::find(by_stride.begin(), by_stride.end(), k) - by_stride.begin();
    iota.perm.push_back(place);
  }
  if (TransposedIota(iota.reshape_dims, iota.perm) != devices) return std::nullopt;
  if (std::is_sorted(iota.perm.begin(), iota.perm.end())) iota = {{n}, {}};
  return iota;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<HloSharding> ParseAll() {
    ALPA_ASSIGN_OR_RETURN(HloSharding sharding, ParseSharding());
    SkipSpaces();
    if (pos_ != text_.size()) return Error("the end of the sharding");
    return sharding;
  }

 private:
  Status ErrorAt(size_t pos, std::string_view message) const {
    const bool long_text = text_.size() > 80;
    return InvalidArgument("sharding column {}: {} (in '{}{}')", pos + 1, message,
                           text_.substr(0, 80), long_text ? "..." : "");
  }
  Status Error(std::string_view expected) const {
    const std::string found =
        pos_ >= text_.size() ? "the end" : fmt::format("'{}'", text_.substr(pos_, 12));
    return ErrorAt(pos_, fmt::format("expected {}, found {}", expected, found));
  }
  void SkipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(char c) {
    SkipSpaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  Status Expect(char c) { return Consume(c) ? Status::Ok() : Error(fmt::format("'{}'", c)); }
  std::string_view Word() {
    SkipSpaces();
    const size_t begin = pos_;
    while (pos_ < text_.size() &&
           (std::islower(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return text_.substr(begin, pos_ - begin);
  }
  Result<int64_t> Int() {
    SkipSpaces();
    const size_t begin = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (value > (int64_t{1} << 50)) return ErrorAt(begin, "integer too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == begin) return Error("an integer");
    return value;
  }
  // int (',' int)*
  Result<std::vector<int64_t>> Ints() {
    std::vector<int64_t> values;
    do {
      ALPA_ASSIGN_OR_RETURN(int64_t value, Int());
      values.push_back(value);
    } while (Consume(','));
    return values;
  }
  // '[' ints ']'
  Result<std::vector<int64_t>> BracketedInts(char open, char close) {
    ALPA_RETURN_IF_ERROR(Expect(open));
    ALPA_ASSIGN_OR_RETURN(std::vector<int64_t> values, Ints());
    ALPA_RETURN_IF_ERROR(Expect(close));
    return values;
  }
  // metadata={...}: skipped, braces matched outside quoted strings.
  Status SkipBraces() {
    if (!Peek('{')) return Error("'{'");
    int depth = 0;
    bool quoted = false;
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (quoted) {
        if (c == '\\') ++pos_;
        if (c == '"') quoted = false;
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        ++pos_;
        return Status::Ok();
      }
    }
    return Error("'}' closing the metadata");
  }

  Result<HloSharding> ParseSharding() {
    const size_t open = pos_;
    ALPA_RETURN_IF_ERROR(Expect('{'));
    if (Consume('}')) return HloSharding::Tuple({});
    if (!Peek('{')) return ParseSingle(open);
    std::vector<HloSharding> elements;
    do {
      ALPA_ASSIGN_OR_RETURN(HloSharding element, ParseSharding());
      elements.push_back(std::move(element));
    } while (Consume(','));
    ALPA_RETURN_IF_ERROR(Expect('}'));
    return HloSharding::Tuple(std::move(elements));
  }

  Result<SubgroupType> ParseSubgroupType() {
    const size_t begin = pos_;
    const std::string_view word = Word();
    for (SubgroupType type :
         {SubgroupType::kReplicated, SubgroupType::kManual, SubgroupType::kUnreduced}) {
      if (word == SubgroupTypeName(type)) return type;
    }
    pos_ = begin;
    return Error("a subgroup type (replicated, manual or unreduced)");
  }

  // Everything after the '{' of one sharding, up to and including its '}'.
  Result<HloSharding> ParseSingle(size_t open) {
    std::vector<std::string_view> seen;
    std::optional<int64_t> device;
    std::vector<int64_t> dims, devices, reshape, perm;
    bool iota = false, replicate_last = false;
    std::optional<std::vector<SubgroupType>> subgroups;
    size_t devices_pos = open;
    while (!Consume('}')) {
      const size_t begin = pos_;
      const std::string_view word = Word();
      if (word.empty()) {
        return Error(
            "a sharding keyword (replicated, manual, maximal, device=, devices=, "
            "last_tile_dim_replicate, last_tile_dims=, metadata=) or '}'");
      }
      if (std::find(seen.begin(), seen.end(), word) != seen.end() && word != "metadata") {
        return ErrorAt(begin, fmt::format("'{}' given twice", word));
      }
      seen.push_back(word);
      if (word == "replicated" || word == "manual" || word == "maximal") continue;
      if (word == "last_tile_dim_replicate") {
        replicate_last = true;
        continue;
      }
      const bool known =
          word == "device" || word == "devices" || word == "last_tile_dims" || word == "metadata";
      if (!known) return ErrorAt(begin, fmt::format("unknown sharding keyword '{}'", word));
      ALPA_RETURN_IF_ERROR(Expect('='));
      if (word == "metadata") {
        ALPA_RETURN_IF_ERROR(SkipBraces());
      } else if (word == "device") {
        ALPA_ASSIGN_OR_RETURN(device, Int());
      } else if (word == "last_tile_dims") {
        ALPA_RETURN_IF_ERROR(Expect('{'));
        subgroups.emplace();
        do {
          ALPA_ASSIGN_OR_RETURN(SubgroupType type, ParseSubgroupType());
          subgroups->push_back(type);
        } while (Consume(','));
        ALPA_RETURN_IF_ERROR(Expect('}'));
      } else {  // devices
        devices_pos = begin;
        ALPA_ASSIGN_OR_RETURN(dims, BracketedInts('[', ']'));
        if (Consume('<')) {
          iota = true;
          ALPA_RETURN_IF_ERROR(Expect('='));
          ALPA_ASSIGN_OR_RETURN(reshape, BracketedInts('[', ']'));
          if (Consume('T')) {
            ALPA_ASSIGN_OR_RETURN(perm, BracketedInts('(', ')'));
          }
        } else {
          ALPA_ASSIGN_OR_RETURN(devices, Ints());
        }
      }
    }
    auto has = [&](std::string_view w) { return std::count(seen.begin(), seen.end(), w) > 0; };
    const int kinds = has("replicated") + has("manual") + has("maximal") + has("devices");
    if (kinds != 1) {
      return ErrorAt(open, "expected exactly one of replicated, manual, maximal or devices=");
    }
    if (has("maximal") != device.has_value()) {
      return ErrorAt(open, "'maximal' and 'device=' go together");
    }
    if (!has("devices") && (replicate_last || subgroups)) {
      return ErrorAt(open, "last_tile_dim_replicate and last_tile_dims need devices=");
    }
    if (has("replicated")) return HloSharding::Replicated();
    if (has("manual")) return HloSharding::Manual();
    if (has("maximal")) return HloSharding::Maximal(*device);

    if (replicate_last && subgroups) {
      return ErrorAt(open, "last_tile_dim_replicate and last_tile_dims are exclusive");
    }
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 1; })) {
      return ErrorAt(devices_pos, "a tile dimension below 1");
    }
    if (iota) {
      if (perm.empty()) {
        perm.resize(reshape.size());
        std::iota(perm.begin(), perm.end(), 0);
      }
      if (Product(reshape) != Product(dims) || perm.size() != reshape.size() ||
          !IsPermutation(perm)) {
        return ErrorAt(devices_pos, fmt::format("iota [{}]<=[{}]T({}) does not fit the tile grid",
                                                fmt::join(dims, ","), fmt::join(reshape, ","),
                                                fmt::join(perm, ",")));
      }
      devices = TransposedIota(reshape, perm);
    }
    if (static_cast<int64_t>(devices.size()) != Product(dims)) {
      return ErrorAt(devices_pos, fmt::format("{} devices for a tile grid [{}]", devices.size(),
                                              fmt::join(dims, ",")));
    }
    std::vector<int64_t> sorted = devices;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return ErrorAt(devices_pos, "a device is listed twice");
    }
    if (replicate_last) subgroups = {SubgroupType::kReplicated};
    if (subgroups && subgroups->size() > dims.size()) {
      return ErrorAt(devices_pos, fmt::format("{} subgroups for a tile grid of {} dimensions",
                                              subgroups->size(), dims.size()));
    }
    return HloSharding::Tiled(std::move(dims), std::move(devices),
                              subgroups.value_or(std::vector<SubgroupType>{}));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view SubgroupTypeName(SubgroupType type) {
  switch (type) {
    case SubgroupType::kReplicated:
      return "replicated";
    case SubgroupType::kManual:
      return "manual";
    case SubgroupType::kUnreduced:
      return "unreduced";
  }
  return "?";
}

HloSharding HloSharding::Manual() {
  HloSharding sharding;
  sharding.kind = Kind::kManual;
  return sharding;
}

HloSharding HloSharding::Maximal(int64_t device) {
  HloSharding sharding;
  sharding.kind = Kind::kMaximal;
  sharding.device = device;
  return sharding;
}

HloSharding HloSharding::Tuple(std::vector<HloSharding> elements) {
  HloSharding sharding;
  sharding.kind = Kind::kTuple;
  sharding.elements = std::move(elements);
  return sharding;
}

HloSharding HloSharding::Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices,
                               std::vector<SubgroupType> subgroups) {
  ALPA_CHECK(Product(tile_dims) == static_cast<int64_t>(devices.size()) &&
                 subgroups.size() <= tile_dims.size(),
             "tile grid [{}] with {} devices and {} subgroups", fmt::join(tile_dims, ","),
             devices.size(), subgroups.size());
  HloSharding sharding;
  sharding.kind = Kind::kTiled;
  sharding.tile_dims = std::move(tile_dims);
  sharding.devices = std::move(devices);
  sharding.subgroups = std::move(subgroups);
  return sharding;
}

int64_t HloSharding::TensorRank() const {
  return static_cast<int64_t>(tile_dims.size() - subgroups.size());
}

std::vector<int64_t> TransposedIota(const std::vector<int64_t>& reshape_dims,
                                    const std::vector<int64_t>& perm) {
  ALPA_CHECK(perm.size() == reshape_dims.size(), "perm of {} for {} dims", perm.size(),
             reshape_dims.size());
  // Output dimension k has size reshape_dims[perm[k]] and steps by that input's row-major stride.
  const size_t rank = perm.size();
  std::vector<int64_t> in_stride(rank, 1), size(rank), stride(rank);
  for (size_t k = rank; k-- > 1;) in_stride[k - 1] = in_stride[k] * reshape_dims[k];
  for (size_t k = 0; k < rank; ++k) {
    size[k] = reshape_dims[static_cast<size_t>(perm[k])];
    stride[k] = in_stride[static_cast<size_t>(perm[k])];
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(Product(reshape_dims)));
  std::vector<int64_t> index(rank, 0);
  for (int64_t count = Product(reshape_dims); count > 0; --count) {
    int64_t value = 0;
    for (size_t k = 0; k < rank; ++k) value += index[k] * stride[k];
    out.push_back(value);
    for (size_t k = rank; k-- > 0 && ++index[k] == size[k];) index[k] = 0;  // row-major odometer
  }
  return out;
}

Result<HloSharding> ParseHloSharding(std::string_view text) { return Parser(text).ParseAll(); }

std::string ToString(const HloSharding& sharding) {
  switch (sharding.kind) {
    case HloSharding::Kind::kReplicated:
      return "{replicated}";
    case HloSharding::Kind::kManual:
      return "{manual}";
    case HloSharding::Kind::kMaximal:
      return fmt::format("{{maximal device={}}}", sharding.device);
    case HloSharding::Kind::kTuple: {
      std::vector<std::string> elements;
      for (const HloSharding& element : sharding.elements) elements.push_back(ToString(element));
      return fmt::format("{{{}}}", fmt::join(elements, ", "));
    }
    case HloSharding::Kind::kTiled:
      break;
  }
  std::string out = fmt::format("{{devices=[{}]", fmt::join(sharding.tile_dims, ","));
  if (std::optional<Iota> iota = FindIota(sharding.devices)) {
    out += fmt::format("<=[{}]", fmt::join(iota->reshape_dims, ","));
    if (!iota->perm.empty()) out += fmt::format("T({})", fmt::join(iota->perm, ","));
  } else {
    out += fmt::format("{}", fmt::join(sharding.devices, ","));
  }
  if (sharding.subgroups == std::vector<SubgroupType>{SubgroupType::kReplicated}) {
    out += " last_tile_dim_replicate";
  } else if (!sharding.subgroups.empty()) {
    std::vector<std::string_view> names;
    for (SubgroupType type : sharding.subgroups) names.push_back(SubgroupTypeName(type));
    out += fmt::format(" last_tile_dims={{{}}}", fmt::join(names, ", "));
  }
  return out + "}";
}

}  // namespace alpa::sharding
