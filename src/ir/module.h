// A module: computations, one of them the entry, plus the module-level header attributes.
#ifndef ALPA_IR_MODULE_H_
#define ALPA_IR_MODULE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/computation.h"

namespace alpa::ir {

// `HloModule name, key=value, ...`
struct ModuleConfig {
  std::optional<ProgramShape> entry_computation_layout;
  bool is_scheduled = false;
  std::optional<int64_t> num_partitions;
  std::optional<int64_t> replica_count;
  // Other header attributes (input_output_alias, frontend_attributes, ...) as name -> raw text.
  std::vector<std::pair<std::string, std::string>> opaque;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // The file (or other source name) the module was parsed from; empty for one built in C++.
  const std::string& source_file() const { return source_file_; }
  void set_source_file(std::string source_file) { source_file_ = std::move(source_file); }

  // Takes ownership; the computation's parent becomes this module.
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Computations in insertion order (the order of the HLO text).
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  Computation* GetComputation(std::string_view name) const;  // nullptr if absent

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  const ModuleConfig& config() const { return config_; }
  ModuleConfig& mutable_config() { return config_; }

  // Computations reachable from the entry, every callee before its callers, the entry last.
  std::vector<Computation*> MakeComputationPostOrder() const;
  // Instructions in all computations.
  int64_t instruction_count() const;

 private:
  std::string name_;
  std::string source_file_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  ModuleConfig config_;
};

}  // namespace alpa::ir

#endif  // ALPA_IR_MODULE_H_
