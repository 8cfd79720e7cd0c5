#include "tools/alpa/inspect_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cluster/presets.h"
#include "cost/compute_cost.h"
#include "cost/liveness.h"
#include "hlo/printer.h"
#include "support/units.h"
#include "tools/alpa/command_util.h"
#include "tools/alpa/memory_report.h"
#include "tools/alpa/module_summary.h"

namespace alpa::tools {
namespace {

nlohmann::ordered_json ConfigJson(const ZooStep& zoo, const ZooFlags& flags) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const ConfigValue& entry : StepConfig(zoo, flags)) {
    std::visit([&](const auto& value) { json[entry.key] = value; }, entry.value);
  }
  return json;
}

// One forward pass over the global batch, its FLOPs in dots and convolutions: what PyTorch's
// FlopCounterMode counts for a model's forward call (2 m n k per matmul, 2 |out| c_in k_h k_w /
// groups per convolution), so an imported model's figure compares with PyTorch's own.
Result<double> ForwardDotAndConvolutionFlops(const ZooStep& zoo) {
  ALPA_ASSIGN_OR_RETURN(const cost::FlopCount loss, cost::CountFlops(*zoo.zoo.model.loss->entry()));
  return DotAndConvolutionFlops(loss) * static_cast<double>(zoo.training.num_micro_batches);
}

// The report of a zoo model: the model and its config, its weights (Alpa's #Params) and the
// train step's summary.
nlohmann::ordered_json ZooJson(const ZooStep& zoo, const ZooFlags& flags, const ModuleSummary& step,
                               double forward_dot_conv) {
  nlohmann::ordered_json json;
  json["model"] = zoo.zoo.entry.name;
  json["family"] = zoo.zoo.entry.family;
  json["description"] = zoo.zoo.entry.description;
  json["config"] = ConfigJson(zoo, flags);
  json["parameters"] = zoo.weight_elements;
  json["parameter_bytes"] = zoo.weight_bytes;
  json["flops"] = step.flops.flops;
  json["flops_dot_conv"] = DotAndConvolutionFlops(step.flops);
  json["forward_flops_dot_conv"] = forward_dot_conv;
  json["flops_by_opcode"] = FlopsByOpcodeJson(step);
  json["computations"] = step.computations;
  json["instructions"] = step.instructions;
  json["opcodes"] = OpcodesJson(step);
  json["peak_memory_bytes"] = step.memory.peak_bytes;
  json["step"] = {{"module", step.name},
                  {"parameters", step.parameters.size()},
                  {"parameter_elements", step.parameter_elements},
                  {"parameter_bytes", step.parameter_bytes},
                  {"result", step.root->shape().ToString(/*print_layout=*/false)}};
  return json;
}

std::string OverridesText(const ZooFlags& flags) {
  std::string text;
  for (const auto& [key, value] : ShapeOverrides(flags)) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", key, value);
  }
  return text;
}

std::string ZooText(const ZooStep& zoo, const ZooFlags& flags, const ModuleSummary& step,
                    double forward_dot_conv) {
  const double dot_conv = DotAndConvolutionFlops(step.flops);
  std::string out;
  out += fmt::format("model         {}  ({})\n", zoo.zoo.entry.name, zoo.zoo.entry.description);
  if (const std::string overrides = OverridesText(flags); !overrides.empty()) {
    out += fmt::format("overrides     {}\n", overrides);
  }
  out += fmt::format("config        {}\n", DescribeConfig(zoo));
  out += fmt::format("parameters    {} ({} weights, {})\n", FormatDecimal(zoo.weight_elements, ""),
                     zoo.weight_elements, FormatBytes(zoo.weight_bytes));
  out +=
      fmt::format("flops         {} per training step\n", FormatDecimal(step.flops.flops, "FLOP"));
  out += fmt::format("              {} of them in dot and convolution (what Alpa's TFLOPS count)\n",
                     FormatDecimal(dot_conv, "FLOP"));
  out += fmt::format(
      "              {} in dot and convolution per forward pass (what PyTorch's "
      "FlopCounterMode counts)\n",
      FormatDecimal(forward_dot_conv, "FLOP"));
  out += fmt::format("train step    {}: {} computations, {} instructions, {} parameters ({})\n",
                     step.name, step.computations, step.instructions, step.parameters.size(),
                     FormatBytes(step.parameter_bytes));
  out += fmt::format("peak memory   {} (naive schedule of the train step)\n",
                     FormatBytes(step.memory.peak_bytes));
  out += "\ninstructions by opcode (train step, all computations)\n" + OpcodeTable(step);
  return out;
}

// One execution on the first device type of a cluster, by the roofline of cost/compute_cost.h.
struct DeviceEstimate {
  std::string cluster;
  cluster::DeviceSpec device;
  cost::ComputationCost cost;
  int64_t peak_memory_bytes = 0;

  bool Fits() const { return peak_memory_bytes <= device.memory_bytes; }
};

// The first device type of the cluster `argument` names (a preset or a file).
Result<cluster::DeviceSpec> FirstDevice(const std::string& argument) {
  ALPA_ASSIGN_OR_RETURN(cluster::ClusterSpec spec, cluster::ParseClusterArgument(argument));
  return spec.hosts.front().device;
}

// The naive schedule's peak, with the device's fused values allocating nothing.
Result<DeviceEstimate> EstimateOnOneDevice(const std::string& argument, const ir::Module& module) {
  ALPA_ASSIGN_OR_RETURN(cluster::DeviceSpec device, FirstDevice(argument));
  const cost::DeviceThroughput throughput = cost::ThroughputOf(device);
  const ir::Computation& entry = *module.entry();
  const cost::FusedValues fused = cost::FusionFor(throughput, entry);
  DeviceEstimate estimate{
      argument, device, {}, cost::ComputeLiveness(entry, cost::FullShapeBytes, fused).peak_bytes};
  ALPA_ASSIGN_OR_RETURN(estimate.cost, cost::EstimateComputation(entry, throughput));
  return estimate;
}

nlohmann::ordered_json EstimateJson(const DeviceEstimate& estimate) {
  const double compute_share =
      estimate.cost.seconds > 0 ? estimate.cost.compute_bound_seconds / estimate.cost.seconds : 0;
  return {{"cluster", estimate.cluster},
          {"device", estimate.device.name},
          {"seconds", estimate.cost.seconds},
          {"compute_bound_fraction", compute_share},
          {"bytes_accessed", estimate.cost.bytes},
          {"device_memory_bytes", estimate.device.memory_bytes},
          {"fits_in_device_memory", estimate.Fits()}};
}

std::string EstimateText(const DeviceEstimate& estimate) {
  const cost::ComputationCost& cost = estimate.cost;
  const double compute_share = cost.seconds > 0 ? cost.compute_bound_seconds / cost.seconds : 0;
  std::string out = fmt::format(
      "one device    {} of {}: {} per execution (roofline; {:.0f}% of it compute-bound)\n",
      estimate.device.name, estimate.cluster, FormatSeconds(cost.seconds), 100 * compute_share);
  out += fmt::format(
      "              naive peak memory {} {} its {}\n", FormatBytes(estimate.peak_memory_bytes),
      estimate.Fits() ? "fits in" : "does NOT fit in", FormatBytes(estimate.device.memory_bytes));
  return out;
}

// `--memory`: the model's identity (a zoo model's config), then memory_report.h's breakdown.
int RunMemory(const InspectOptions& options, const ModelArgument& model) {
  std::optional<cluster::DeviceSpec> device;
  if (!options.cluster.empty()) {
    Result<cluster::DeviceSpec> first = FirstDevice(options.cluster);
    if (!first.ok()) return ReportError(first.status().WithContext("--cluster"));
    device = std::move(first).value();
  }
  const cost::FusedValues fused =
      device ? cost::FusionFor(cost::ThroughputOf(*device), *model.module().entry())
             : cost::NoFusion();
  const cost::MemoryModel memory = ModelMemory(model, fused, device && device->fuses_kernels);
  std::optional<DeviceFit> fit;
  if (device) fit = DeviceFit{options.cluster, *device, memory.liveness.peak_bytes};
  if (options.json) {
    nlohmann::ordered_json json;
    if (model.zoo) {
      json["model"] = model.zoo->zoo.entry.name;
      json["config"] = ConfigJson(*model.zoo, options.zoo);
    } else {
      json["source"] = options.model_path;
    }
    json["module"] = model.module().name();
    json["memory"] = plan::MemoryJson(memory);
    if (fit) json["one_device"] = FitJson(*fit);
    fmt::print("{}\n", DumpJson(json));
    return kExitOk;
  }
  std::string text;
  if (model.zoo) {
    text += fmt::format("model         {}  ({})\n", model.zoo->zoo.entry.name,
                        model.zoo->zoo.entry.description);
    if (const std::string overrides = OverridesText(options.zoo); !overrides.empty()) {
      text += fmt::format("overrides     {}\n", overrides);
    }
    text += fmt::format("config        {}\n", DescribeConfig(*model.zoo));
  } else {
    text += fmt::format("module        {}  ({})\n", model.module().name(), options.model_path);
  }
  text += plan::MemoryText(memory);
  if (fit) text += "\n" + FitText(*fit);
  fmt::print("{}", text);
  return kExitOk;
}

}  // namespace

CLI::App* AddInspectCommand(CLI::App& app, InspectOptions& options) {
  CLI::App* command = app.add_subcommand(
      "inspect",
      "Summarize an HLO module, or a zoo model's training step: instructions, parameters, FLOPs, "
      "naive peak memory");
  command
      ->add_option("MODEL", options.model_path,
                   "HLO text file (plain or .gz), or a model of the zoo (`alpa zoo` lists them)")
      ->required();
  command->add_flag("--json", options.json, "Print the summary as one JSON object");
  command->add_flag("--print", options.print, "Print the module back as HLO text instead");
  command->add_flag("--memory", options.memory,
                    "Print what the peak memory of one device running the module is made of "
                    "(weights, optimizer state, gradients, saved activations, ...) instead");
  command->add_option("--export", options.export_path,
                      "Also write the module (a zoo model's train step) as HLO text to this file");
  command->add_option(
      "--cluster", options.cluster,
      "Estimate one execution on one device of this cluster: PRESET[:HOSTS[xDEVICES]] "
      "or FILE.json (`alpa cluster show` prints one); with --memory, whether the peak fits it");
  AddZooFlags(*command, options.zoo, /*training=*/true);
  command->footer(
      "For a zoo model the module is one training step (forward, backward, optimizer update) and "
      "'parameters' counts the model's weights.\n"
      "Exit codes: 0 success, 1 internal error, 2 bad input (unreadable file, HLO syntax or "
      "verifier error, unknown model, impossible config, bad flag).");
  return command;
}

int RunInspect(const InspectOptions& flags) {
  InspectOptions options = flags;
  options.zoo.weights_needed = false;  // an imported model's shapes suffice
  Result<ModelArgument> model = ResolveModel(options.model_path, options.zoo);
  if (!model.ok()) return ReportError(model.status());
  if (!options.export_path.empty()) {
    const Status written =
        WriteTextFile(options.export_path, hlo::PrintModule(model->module()), "--export");
    if (!written.ok()) return ReportError(written);
  }
  if (options.print) {
    fmt::print("{}", hlo::PrintModule(model->module()));
    return kExitOk;
  }
  if (options.memory) return RunMemory(options, *model);
  Result<ModuleSummary> summary = Summarize(model->module());
  if (!summary.ok()) return ReportError(summary.status());
  std::optional<DeviceEstimate> estimate;
  if (!options.cluster.empty()) {
    Result<DeviceEstimate> estimated = EstimateOnOneDevice(options.cluster, model->module());
    if (!estimated.ok()) return ReportError(estimated.status().WithContext("--cluster"));
    estimate = std::move(estimated).value();
  }
  double forward_dot_conv = 0;
  if (model->zoo) {
    Result<double> forward = ForwardDotAndConvolutionFlops(*model->zoo);
    if (!forward.ok()) return ReportError(forward.status());
    forward_dot_conv = *forward;
  }
  if (options.json) {
    nlohmann::ordered_json json =
        model->zoo ? ZooJson(*model->zoo, options.zoo, *summary, forward_dot_conv)
                   : ToJson(*summary, options.model_path);
    if (estimate) json["one_device"] = EstimateJson(*estimate);
    fmt::print("{}\n", DumpJson(json));
    return kExitOk;
  }
  std::string text = model->zoo ? ZooText(*model->zoo, options.zoo, *summary, forward_dot_conv)
                                : ToText(*summary, options.model_path);
  if (estimate) text += "\n" + EstimateText(*estimate);
  fmt::print("{}", text);
  return kExitOk;
}

}  // namespace alpa::tools
