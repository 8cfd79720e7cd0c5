#include "tools/alpa/grad_command.h"

#include <fmt/format.h>

#include <memory>
#include <set>

#include "autodiff/grad.h"
#include "hlo/printer.h"
#include "tools/alpa/command_util.h"

namespace alpa::tools {
namespace {

// The loss to differentiate and the parameters to differentiate it with respect to.
struct GradInput {
  std::unique_ptr<ir::Module> file;
  std::optional<ZooStep> zoo;
  std::vector<int64_t> wrt;

  const ir::Module& loss() const { return file ? *file : *zoo->zoo.model.loss; }
};

Result<GradInput> LoadGradInput(const GradCommandOptions& options) {
  GradInput input;
  input.wrt = options.wrt;
  if (IsTrainableModel(options.model, options.zoo)) {
    ALPA_ASSIGN_OR_RETURN(input.zoo, BuildZooLoss(options.model, options.zoo));
    if (input.wrt.empty()) input.wrt = input.zoo->zoo.model.weights;
    return input;
  }
  ALPA_ASSIGN_OR_RETURN(ModelArgument model, ResolveModel(options.model, options.zoo));
  input.file = std::move(model.file);
  if (input.wrt.empty()) {
    return InvalidArgument(
        "{}: give --wrt with the numbers of the parameters to differentiate with respect to (0 to "
        "{})",
        options.model, input.file->entry()->parameter_count() - 1);
  }
  return input;
}

// --wrt names parameters of the entry that have a gradient; the message names the flag.
Status CheckWrt(const GradInput& input, const std::string& model) {
  const std::vector<ir::Instruction*> parameters = input.loss().entry()->parameters();
  std::set<int64_t> seen;
  for (int64_t number : input.wrt) {
    if (!seen.insert(number).second) {
      return InvalidArgument("--wrt: parameter {} is listed twice; list each once", number);
    }
    if (number < 0 || number >= static_cast<int64_t>(parameters.size())) {
      return InvalidArgument("--wrt {}: {} has parameters 0 to {} (%{} takes {})", number, model,
                             parameters.size() - 1, input.loss().entry()->name(),
                             parameters.size());
    }
    const ir::Shape& shape = parameters[number]->shape();
    if (!shape.IsArray() || !ir::IsFloating(shape.dtype())) {
      return InvalidArgument(
          "--wrt {}: parameter {} (%{}) of {} is {}, which has no gradient; list "
          "float parameters only",
          number, number, parameters[number]->name(), model,
          shape.ToString(/*print_layout=*/false));
    }
  }
  return Status::Ok();
}

}  // namespace

CLI::App* AddGradCommand(CLI::App& app, GradCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "grad",
      "Differentiate a loss (an HLO module returning a scalar float, or a zoo model's loss) and "
      "print the gradient module as HLO text");
  command
      ->add_option("MODEL", options.model,
                   "HLO text file (plain or .gz) whose entry returns the loss, or a model of the "
                   "zoo (`alpa zoo` lists them)")
      ->required();
  command
      ->add_option("--wrt", options.wrt,
                   "Parameter numbers to differentiate with respect to, e.g. 0,2 (default for a "
                   "zoo model: its weights)")
      ->delimiter(',');
  command->add_option("-o,--output", options.output_path,
                      "Write the gradient module to this file instead of printing it");
  AddZooFlags(*command, options.zoo, /*training=*/false);
  command->footer(
      "The gradient module takes the loss's parameters and returns (loss, dloss/dp for each "
      "--wrt parameter, in that order).\n"
      "Exit codes: 0 success, 1 internal error, 2 bad input (unreadable file, HLO syntax or "
      "verifier error, a bad --wrt, an op without a gradient rule between a parameter and the "
      "loss).");
  return command;
}

int RunGrad(const GradCommandOptions& options) {
  Result<GradInput> input = LoadGradInput(options);
  if (!input.ok()) return ReportError(input.status());
  if (Status wrt = CheckWrt(*input, options.model); !wrt.ok()) return ReportError(wrt);
  Result<std::unique_ptr<ir::Module>> grad = autodiff::Grad(input->loss(), input->wrt);
  if (!grad.ok()) return ReportError(grad.status().WithContext(options.model));
  const std::string text = hlo::PrintModule(**grad);
  if (options.output_path.empty()) {
    fmt::print("{}", text);
    return kExitOk;
  }
  if (Status written = WriteTextFile(options.output_path, text, "--output"); !written.ok()) {
    return ReportError(written);
  }
  fmt::print("wrote {}: the gradient of {} with respect to parameters {} ({} instructions)\n",
             options.output_path, options.model, fmt::join(input->wrt, ", "),
             (*grad)->instruction_count());
  return kExitOk;
}

}  // namespace alpa::tools
