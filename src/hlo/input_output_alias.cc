#include "hlo/input_output_alias.h"

#include <cctype>
#include <charconv>

namespace alpa::hlo {
namespace {

class AliasReader {
 public:
  explicit AliasReader(std::string_view text) : text_(text) {}

  Result<std::vector<InputOutputAlias>> Read() {
    std::vector<InputOutputAlias> aliases;
    ALPA_RETURN_IF_ERROR(Expect('{', "'{' to start the list"));
    if (Consume('}')) return AtEnd(std::move(aliases));
    do {
      InputOutputAlias& alias = aliases.emplace_back();
      ALPA_ASSIGN_OR_RETURN(alias.output_index, Index("the output's shape index, e.g. {0}"));
      ALPA_RETURN_IF_ERROR(Expect(':', "':' after the output's shape index"));
      ALPA_RETURN_IF_ERROR(Expect('(', "'(' before the parameter number"));
      ALPA_ASSIGN_OR_RETURN(alias.parameter, Integer("the parameter number"));
      ALPA_RETURN_IF_ERROR(Expect(',', "',' after the parameter number"));
      ALPA_ASSIGN_OR_RETURN(alias.parameter_index, Index("the parameter's shape index, e.g. {}"));
      if (Consume(',')) {
        const std::string_view kind = Word();
        if (kind != "must-alias" && kind != "may-alias") {
          return Error("must-alias or may-alias");
        }
        alias.must_alias = kind == "must-alias";
      }
      ALPA_RETURN_IF_ERROR(Expect(')', "')' after the alias"));
    } while (Consume(','));
    ALPA_RETURN_IF_ERROR(Expect('}', "',' or '}' after an alias"));
    return AtEnd(std::move(aliases));
  }

 private:
  void SkipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  Status Error(std::string_view expected) const {
    return InvalidArgument("input_output_alias: expected {} at offset {} of '{}'", expected, at_,
                           text_);
  }

  Status Expect(char c, std::string_view what) { return Consume(c) ? Status::Ok() : Error(what); }

  Result<int64_t> Integer(std::string_view what) {
    SkipSpace();
    int64_t value = -1;
    const auto [end, error] =
        std::from_chars(text_.data() + at_, text_.data() + text_.size(), value);
    if (error != std::errc() || value < 0) return Error(what);
    at_ = static_cast<size_t>(end - text_.data());
    return value;
  }

  // `{}` or `{i, j, ...}`.
  Result<std::vector<int64_t>> Index(std::string_view what) {
    if (!Consume('{')) return Error(what);
    std::vector<int64_t> index;
    if (Consume('}')) return index;
    do {
      ALPA_ASSIGN_OR_RETURN(const int64_t i, Integer(what));
      index.push_back(i);
    } while (Consume(','));
    ALPA_RETURN_IF_ERROR(Expect('}', what));
    return index;
  }

  std::string_view Word() {
    SkipSpace();
    const size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) ||
                                  text_[at_] == '-' || text_[at_] == '_')) {
      ++at_;
    }
    return text_.substr(start, at_ - start);
  }

  Result<std::vector<InputOutputAlias>> AtEnd(std::vector<InputOutputAlias> aliases) {
    SkipSpace();
    if (at_ != text_.size()) return Error("the end of the attribute");
    return aliases;
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

Result<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view text) {
  return AliasReader(text).Read();
}

Result<std::vector<InputOutputAlias>> InputOutputAliases(const ir::Module& module) {
  for (const auto& [key, raw] : module.config().opaque) {
    if (key == "input_output_alias") return ParseInputOutputAlias(raw);
  }
  return std::vector<InputOutputAlias>{};
}

}  // namespace alpa::hlo
