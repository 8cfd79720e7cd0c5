#include "solver/iopddl_reader.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/json_text.h"

namespace alpa::solver {
namespace {

using Matrix = IopddlDocument::Matrix;
using Document = IopddlDocument;

// What the document holds at a place. Objects have fixed keys; every bulk field is a Matrix (an
// array of arrays of integers).
enum class Expect {
  kRoot,     // {"problem": ...}
  kProblem,  // {"name", "nodes", "edges", "usage_limit"}
  kNodes,    // {"intervals", "costs", "usages"}
  kEdges,    // {"nodes", "costs"}
  kMatrix,   // [[...], ...]
  kRow,      // [int, ...]
  kInteger,  // usage_limit, a matrix entry
  kString,   // name
};

struct ObjectSchema {
  Expect object;
  std::array<std::string_view, 4> keys;  // unused slots are empty
  std::array<bool, 4> required;
};

constexpr ObjectSchema kSchemas[] = {
    {Expect::kRoot, {"problem"}, {true}},
    {Expect::kProblem, {"name", "nodes", "edges", "usage_limit"}, {false, true, false, false}},
    {Expect::kNodes, {"intervals", "costs", "usages"}, {true, true, true}},
    {Expect::kEdges, {"nodes", "costs"}, {true, true}},
};

const ObjectSchema& SchemaOf(Expect object) {
  for (const ObjectSchema& schema : kSchemas) {
    if (schema.object == object) return schema;
  }
  ALPA_CHECK(false, "no schema for object kind {}", static_cast<int>(object));
  return kSchemas[0];
}

// A SAX handler for nlohmann::json that checks the document against the schema above as it goes
// and fills a Document. On the first error it stops the parse and keeps the message, which names
// the JSON path ("problem.nodes.costs[3][1]").
class Reader {
 public:
  explicit Reader(Document& document) : document_(document) {}

  const std::optional<Status>& error() const { return error_; }

  bool null() { return Mismatch("null"); }
  bool boolean(bool) { return Mismatch("boolean"); }
  bool number_integer(int64_t value) { return Integer(value); }
  bool number_unsigned(uint64_t value) {
    if (value > uint64_t{INT64_MAX}) return Fail("{}: {} is too large", Path(), value);
    return Integer(static_cast<int64_t>(value));
  }
  bool number_float(double, const std::string& text) {
    if (Expected() == Expect::kInteger) {
      return Fail("{}: must be an integer, found {}", Path(), text);
    }
    return Mismatch("number");
  }
  bool string(std::string& value) {
    if (Expected() != Expect::kString) return Mismatch("string");
    document_.name = std::move(value);
    return Done();
  }
  bool binary(nlohmann::ordered_json::binary_t&) { return Mismatch("binary"); }

  bool start_object(size_t) {
    const Expect expected = Expected();
    if (expected != Expect::kRoot && expected != Expect::kProblem && expected != Expect::kNodes &&
        expected != Expect::kEdges) {
      return Mismatch("object");
    }
    stack_.push_back(Frame{expected});
    return true;
  }
  bool key(std::string& key) {
    Frame& frame = stack_.back();
    const ObjectSchema& schema = SchemaOf(frame.expect);
    for (size_t k = 0; k < schema.keys.size(); ++k) {
      if (schema.keys[k].empty() || schema.keys[k] != key) continue;
      if (frame.seen[k]) return Fail("{}: duplicate key", JsonPath(ObjectPath(), key));
      frame.seen[k] = true;
      frame.key = static_cast<int>(k);
      return true;
    }
    std::string names;
    for (std::string_view name : schema.keys) {
      if (!name.empty()) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", name);
    }
    return Fail("{}: unknown key; expected {}", JsonPath(ObjectPath(), key), names);
  }
  bool end_object() {
    const Frame& frame = stack_.back();
    const ObjectSchema& schema = SchemaOf(frame.expect);
    for (size_t k = 0; k < schema.keys.size(); ++k) {
      if (schema.required[k] && !frame.seen[k]) {
        const std::string path = ObjectPath();
        if (path.empty()) return Fail("missing key '{}'", schema.keys[k]);
        return Fail("{}: missing key '{}'", path, schema.keys[k]);
      }
    }
    stack_.pop_back();
    return Done();
  }
  bool start_array(size_t) {
    const Expect expected = Expected();
    if (expected == Expect::kMatrix) {
      matrix_ = Target();
    } else if (expected == Expect::kRow) {
      row_.clear();
    } else {
      return Mismatch("array");
    }
    stack_.push_back(Frame{expected});
    return true;
  }
  bool end_array() {
    // A row is collected in `row_` and stored at its exact size: growing each row in place cost
    // a third of the time on the contest's largest files.
    if (stack_.back().expect == Expect::kRow) matrix_->emplace_back(row_.begin(), row_.end());
    stack_.pop_back();
    return Done();
  }

  // A syntax error: the caller reports it with its line and column.
  template <typename Exception>
  bool parse_error(size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  struct Frame {
    Expect expect;  // what this object or array is
    int key = -1;   // objects: the schema index of the current key
    std::array<bool, 4> seen{};
    int64_t index = 0;  // arrays: the index of the current element

    bool is_array() const { return expect == Expect::kMatrix || expect == Expect::kRow; }
  };

  // What the value starting now must be.
  Expect Expected() const {
    if (stack_.empty()) return Expect::kRoot;
    const Frame& frame = stack_.back();
    switch (frame.expect) {
      case Expect::kRoot:
        return Expect::kProblem;
      case Expect::kProblem:
        switch (frame.key) {
          case 0:
            return Expect::kString;
          case 1:
            return Expect::kNodes;
          case 2:
            return Expect::kEdges;
          default:
            return Expect::kInteger;
        }
      case Expect::kNodes:
      case Expect::kEdges:
        return Expect::kMatrix;
      case Expect::kMatrix:
        return Expect::kRow;
      default:
        return Expect::kInteger;
    }
  }

  // The matrix the array starting now fills.
  Matrix* Target() const {
    const Frame& frame = stack_.back();
    if (frame.expect == Expect::kNodes) {
      return std::array{&document_.intervals, &document_.node_costs, &document_.usages}[frame.key];
    }
    return frame.key == 0 ? &document_.edge_nodes : &document_.edge_costs;
  }

  bool Integer(int64_t value) {
    if (Expected() != Expect::kInteger) return Mismatch("number");
    if (stack_.back().expect == Expect::kRow) {
      row_.push_back(value);
    } else {
      document_.usage_limit = value;
    }
    return Done();
  }

  // A value ended: the enclosing array moves to its next element.
  bool Done() {
    if (!stack_.empty() && stack_.back().is_array()) ++stack_.back().index;
    return true;
  }

  // The path of the value starting now ("problem.nodes.costs[3][1]").
  std::string Path() const {
    std::string path = ObjectPath();
    if (!stack_.empty() && stack_.back().is_array()) {
      path += fmt::format("[{}]", stack_.back().index);
    } else if (!stack_.empty()) {
      path = JsonPath(path, SchemaOf(stack_.back().expect).keys[stack_.back().key]);
    }
    return path;
  }

  // The path of the innermost open object or array itself.
  std::string ObjectPath() const {
    std::string path;
    for (size_t k = 0; k + 1 < stack_.size(); ++k) {
      const Frame& frame = stack_[k];
      if (frame.is_array()) {
        path += fmt::format("[{}]", frame.index);
      } else {
        path = JsonPath(path, SchemaOf(frame.expect).keys[frame.key]);
      }
    }
    return path;
  }

  bool Mismatch(std::string_view found) {
    std::string_view wanted;
    switch (Expected()) {
      case Expect::kRoot:
        return Fail("the problem file must be an object, found {}", found);
      case Expect::kProblem:
      case Expect::kNodes:
      case Expect::kEdges:
        wanted = "an object";
        break;
      case Expect::kMatrix:
        wanted = "an array of arrays of integers";
        break;
      case Expect::kRow:
        wanted = "an array of integers";
        break;
      case Expect::kInteger:
        wanted = "an integer";
        break;
      case Expect::kString:
        wanted = "a string";
        break;
    }
    return Fail("{}: must be {}, found {}", Path(), wanted, found);
  }

  template <typename... Args>
  bool Fail(fmt::format_string<Args...> format, Args&&... args) {
    error_ = InvalidArgument(format, std::forward<Args>(args)...);
    return false;
  }

  Document& document_;
  std::vector<Frame> stack_;
  Matrix* matrix_ = nullptr;  // the matrix being read
  std::vector<int64_t> row_;  // the row being read
  std::optional<Status> error_;
};

// Drives a Reader over the JSON subset of the contest's files: objects, arrays, integers and
// strings of printable ASCII without escapes, with JSON's whitespace. Returns false as soon as the
// text leaves that subset or the reader stops; the caller then parses it with the full parser.
class FastScanner {
 public:
  FastScanner(std::string_view text, Reader& reader)
      : at_(text.data()), end_(text.data() + text.size()), reader_(reader) {}

  bool Scan() {
    if (!Value()) return false;
    SkipSpace();
    return at_ == end_;
  }

 private:
  void SkipSpace() {
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\r' || *at_ == '\t')) ++at_;
  }

  bool Value() {
    SkipSpace();
    if (at_ == end_) return false;
    switch (*at_) {
      case '{':
        return Object();
      case '[':
        return Array();
      case '"': {
        std::string text;
        return String(text) && reader_.string(text);
      }
      default:
        return Integer();
    }
  }

  // '{' [string ':' value (',' string ':' value)*] '}'
  bool Object() {
    ++at_;
    if (!reader_.start_object(0)) return false;
    SkipSpace();
    if (at_ != end_ && *at_ == '}') return ++at_, reader_.end_object();
    while (true) {
      SkipSpace();
      std::string key;
      if (!String(key) || !reader_.key(key)) return false;
      SkipSpace();
      if (at_ == end_ || *at_++ != ':' || !Value()) return false;
      SkipSpace();
      if (at_ == end_) return false;
      const char next = *at_++;
      if (next == '}') return reader_.end_object();
      if (next != ',') return false;
    }
  }

  // '[' [value (',' value)*] ']'
  bool Array() {
    ++at_;
    if (!reader_.start_array(0)) return false;
    SkipSpace();
    if (at_ != end_ && *at_ == ']') return ++at_, reader_.end_array();
    while (true) {
      if (!Value()) return false;
      SkipSpace();
      if (at_ == end_) return false;
      const char next = *at_++;
      if (next == ']') return reader_.end_array();
      if (next != ',') return false;
    }
  }

  bool String(std::string& text) {
    if (at_ == end_ || *at_ != '"') return false;
    const char* begin = ++at_;
    while (at_ != end_ && *at_ != '"') {
      if (*at_ == '\\' || *at_ < 0x20 || *at_ > 0x7e) return false;
      ++at_;
    }
    if (at_ == end_) return false;
    text.assign(begin, at_++);
    return true;
  }

  // -?(0|[1-9][0-9]*) with no fraction or exponent and at most 19 digits (which fit in uint64;
  // longer numbers go to the full parser).
  bool Integer() {
    const bool negative = *at_ == '-';
    if (negative) ++at_;
    const char* digits = at_;
    uint64_t value = 0;
    while (at_ != end_ && *at_ >= '0' && *at_ <= '9') value = value * 10 + (*at_++ - '0');
    const ptrdiff_t count = at_ - digits;
    if (count == 0 || count > 19 || (count > 1 && *digits == '0')) return false;
    if (at_ != end_ && (*at_ == '.' || *at_ == 'e' || *at_ == 'E')) return false;
    if (!negative) return reader_.number_unsigned(value);
    if (value > uint64_t{1} << 63) return false;
    return reader_.number_integer(static_cast<int64_t>(0 - value));
  }

  const char* at_;
  const char* end_;
  Reader& reader_;
};

}  // namespace

Result<IopddlDocument> ReadIopddlDocument(std::string_view text, const std::string& source) {
  {
    IopddlDocument document;
    Reader reader(document);
    if (FastScanner(text, reader).Scan()) return document;
  }
  IopddlDocument document;
  Reader reader(document);
  if (nlohmann::ordered_json::sax_parse(text, &reader)) return document;
  if (reader.error().has_value()) return reader.error()->WithContext(source);
  // A syntax error: the DOM parser words it with the line and column, as for every JSON file of
  // the project. Only failing files pay for the second parse.
  ALPA_RETURN_IF_ERROR(ParseJsonText(text, source).status());
  return InvalidArgument("{}: malformed JSON", source);
}

}  // namespace alpa::solver
