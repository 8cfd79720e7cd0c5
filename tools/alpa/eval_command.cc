#include "tools/alpa/eval_command.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "interp/evaluator.h"
#include "interp/random_inputs.h"
#include "support/table.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/inputs_file.h"
#include "tools/alpa/zoo_training.h"

namespace alpa::tools {
namespace {

// One array of the result: its tuple index ({} for a non-tuple result), shape and checksum.
struct OutputLeaf {
  std::vector<int64_t> index;
  std::string shape;
  interp::Checksum checksum;
};

void CollectLeaves(const ir::Literal& literal, std::vector<int64_t>& index,
                   std::vector<OutputLeaf>& leaves) {
  if (literal.shape().IsTuple()) {
    for (int64_t i = 0; i < literal.shape().tuple_size(); ++i) {
      index.push_back(i);
      CollectLeaves(literal.tuple_element(i), index, leaves);
      index.pop_back();
    }
    return;
  }
  leaves.push_back(
      {index, literal.shape().ToString(/*print_layout=*/false), interp::ComputeChecksum(literal)});
}

std::string IndexText(const std::vector<int64_t>& index) {
  return fmt::format("{{{}}}", fmt::join(index, ","));
}

// Where the arguments come from: "random", "zoo" (initial weights and a synthetic batch) or the
// inputs file.
std::string InputsName(const EvalOptions& options, bool zoo) {
  if (!options.inputs_path.empty()) return options.inputs_path;
  return zoo ? "zoo" : "random";
}

}  // namespace

CLI::App* AddEvalCommand(CLI::App& app, EvalOptions& options) {
  CLI::App* command = app.add_subcommand(
      "eval", "Run an HLO module in the reference interpreter and print output checksums");
  command
      ->add_option("MODEL", options.model_path,
                   "HLO text file (plain or .gz), or a model of the zoo (`alpa zoo` lists them): "
                   "its train step")
      ->required();
  CLI::Option* seed =
      command
          ->add_option("--seed", options.seed,
                       "Seed of the random inputs (floats uniform in [-1,1), integers in [0,8))")
          ->capture_default_str()
          ->check(SeedValidator());
  command
      ->add_option("--inputs", options.inputs_path,
                   "JSON file with the arguments instead of random ones: "
                   "{\"arguments\": [{\"shape\": \"f32[2]\", \"values\": [1, 2]}, ...]}")
      ->excludes(seed);
  command->add_flag("--json", options.json, "Print the result as one JSON object");
  AddZooFlags(*command, options.zoo, /*training=*/true);
  command->footer(
      "A zoo model's train step runs on its initial weights, zero optimizer state and a synthetic "
      "batch drawn from the seed (the first step of `alpa run`) unless --inputs is given.\n"
      "Each output array is fingerprinted by its element count, the sum and the sum of absolute "
      "values of its elements (f64), and a 64-bit hash of its bytes.\n"
      "Exit codes: 0 success, 1 internal error, 2 bad input (unreadable file, HLO syntax or "
      "verifier error, bad inputs, an op the interpreter cannot run).");
  return command;
}

int RunEval(const EvalOptions& options) {
  KeepFreedMemoryForReuse();
  Result<ModelArgument> model = ResolveModel(options.model_path, options.zoo);
  if (!model.ok()) return ReportError(model.status());
  const ir::Module* module = &model->module();
  const ir::Computation& entry = *module->entry();

  std::vector<ir::Literal> arguments;
  if (options.inputs_path.empty() && model->zoo) {
    arguments = InitialCarriedValues(*model->zoo, options.seed);
    for (ir::Literal& value : StepBatch(*model->zoo, options.seed, 0)) {
      arguments.push_back(std::move(value));
    }
  } else if (options.inputs_path.empty()) {
    arguments = interp::RandomArguments(entry, options.seed);
  } else {
    Result<std::vector<ir::Literal>> read = ReadInputsFile(options.inputs_path, entry);
    if (!read.ok()) return ReportError(read.status());
    arguments = std::move(read).value();
  }

  const auto start = std::chrono::steady_clock::now();
  Result<ir::Literal> result = interp::EvaluateModule(*module, std::move(arguments));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    return ReportError(InvalidArgument("{}: evaluation failed: {}", options.model_path,
                                       result.status().message()));
  }
  std::vector<OutputLeaf> leaves;
  std::vector<int64_t> index;
  CollectLeaves(*result, index, leaves);

  if (options.json) {
    nlohmann::ordered_json json;
    json["source"] = options.model_path;
    json["module"] = module->name();
    json["inputs"] = InputsName(options, model->zoo.has_value());
    if (options.inputs_path.empty()) json["seed"] = options.seed;
    json["seconds"] = seconds;
    json["outputs"] = nlohmann::ordered_json::array();
    for (const OutputLeaf& leaf : leaves) {
      json["outputs"].push_back({{"index", leaf.index},
                                 {"shape", leaf.shape},
                                 {"count", leaf.checksum.count},
                                 {"sum", leaf.checksum.sum},
                                 {"abs_sum", leaf.checksum.abs_sum},
                                 {"hash", fmt::format("{:016x}", leaf.checksum.hash)}});
    }
    // A path (or a name taken from the file) need not be UTF-8; the default strict dump would throw
    // on it, so invalid bytes become U+FFFD instead.
    fmt::print("{}\n", json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return kExitOk;
  }

  const std::string inputs =
      !options.inputs_path.empty() ? fmt::format("inputs from {}", options.inputs_path)
      : model->zoo ? fmt::format("initial weights and a synthetic batch, seed {}", options.seed)
                   : fmt::format("random inputs, seed {}", options.seed);
  fmt::print("evaluated {} (%{}) on {} in {}\n\n", module->name(), entry.name(), inputs,
             FormatSeconds(seconds));
  Table table({"output", "shape", "count", "sum", "abs_sum", "hash"},
              {Table::Align::kLeft, Table::Align::kLeft, Table::Align::kRight, Table::Align::kRight,
               Table::Align::kRight, Table::Align::kLeft});
  for (const OutputLeaf& leaf : leaves) {
    table.AddRow({IndexText(leaf.index), leaf.shape, std::to_string(leaf.checksum.count),
                  fmt::format("{:.9g}", leaf.checksum.sum),
                  fmt::format("{:.9g}", leaf.checksum.abs_sum),
                  fmt::format("{:016x}", leaf.checksum.hash)});
  }
  fmt::print("{}", table.Render());
  return kExitOk;
}

}  // namespace alpa::tools
