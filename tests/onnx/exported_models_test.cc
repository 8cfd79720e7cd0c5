// The models of examples/import/, exported by PyTorch (examples/import/export_models.py): each
// imports with PyTorch's parameter count, and its forward output on the committed batch equals
// PyTorch's within 1e-5 of the output's largest value, about as close to the exact (float64)
// result as PyTorch's float32 output is.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "interp/evaluator.h"
#include "ir/builder.h"
#include "onnx/graph_import.h"

#ifndef ALPA_EXAMPLES_DIR
#error "ALPA_EXAMPLES_DIR is defined by tests/onnx/CMakeLists.txt"
#endif

namespace alpa::onnx {
namespace {

class ExportedModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportedModelTest, ImportsPyTorchsParametersAndComputesItsOutput) {
  const std::string directory = std::string(ALPA_EXAMPLES_DIR) + "/import/";
  std::ifstream in(directory + GetParam() + ".expected.json");
  ASSERT_TRUE(in) << "missing " << GetParam() << ".expected.json";
  const nlohmann::json expected = nlohmann::json::parse(in);

  Result<OnnxFile> file = ReadOnnxFile(directory + GetParam() + ".onnx");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ir::ModuleBuilder mb(GetParam());
  ir::ComputationBuilder b = mb.NewComputation("main");
  Result<ImportedGraph> graph = ImportGraph(*file, b, {});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  int64_t parameters = 0;
  for (const ir::Instruction* weight : graph->weights) parameters += weight->shape().ElementCount();
  EXPECT_EQ(parameters, expected["parameters"].get<int64_t>());

  Result<ir::Computation*> entry = b.Build(graph->output);
  ASSERT_TRUE(entry.ok()) << entry.status().message();
  Result<std::unique_ptr<ir::Module>> module = mb.Build(*entry);
  ASSERT_TRUE(module.ok()) << module.status().message();
  ASSERT_EQ(graph->inputs.size(), 1u);
  const ir::Shape& input_shape = graph->inputs[0]->shape();
  EXPECT_EQ(input_shape.dims(), expected["input_shape"].get<std::vector<int64_t>>());
  ir::Literal input = ir::Literal::CreateZeros(input_shape);
  const nlohmann::json& values = expected["input"];
  ASSERT_EQ(static_cast<int64_t>(values.size()), input.element_count());
  for (int64_t i = 0; i < input.element_count(); ++i) {
    if (ir::IsFloating(input_shape.dtype())) {
      input.SetDouble(i, values[static_cast<size_t>(i)].get<double>());
    } else {
      input.SetInt(i, values[static_cast<size_t>(i)].get<int64_t>());
    }
  }
  std::vector<ir::Literal> arguments;
  arguments.push_back(std::move(input));
  Result<std::vector<ir::Literal>> weights = ReadWeights(*file, *graph);
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  for (ir::Literal& weight : *weights) arguments.push_back(std::move(weight));
  Result<ir::Literal> output = interp::EvaluateModule(**module, std::move(arguments));
  ASSERT_TRUE(output.ok()) << output.status().message();

  EXPECT_EQ(output->shape().dims(), expected["output_shape"].get<std::vector<int64_t>>());
  const std::vector<double> torch = expected["output"].get<std::vector<double>>();
  const std::vector<double> exact = expected["output_float64"].get<std::vector<double>>();
  ASSERT_EQ(static_cast<int64_t>(torch.size()), output->element_count());
  ASSERT_EQ(exact.size(), torch.size());
  double largest = 0, from_torch = 0, ours_off = 0, torch_off = 0;
  for (size_t i = 0; i < torch.size(); ++i) {
    const double ours = output->GetDouble(static_cast<int64_t>(i));
    largest = std::max(largest, std::fabs(exact[i]));
    from_torch = std::max(from_torch, std::fabs(ours - torch[i]));
    ours_off = std::max(ours_off, std::fabs(ours - exact[i]));
    torch_off = std::max(torch_off, std::fabs(torch[i] - exact[i]));
  }
  // Within 1e-5 of PyTorch's float32 output, relative to the largest value; and no further from
  // the exact result than twice PyTorch's own float32 output is (our rounding is of its order).
  EXPECT_LE(from_torch, 1e-5 * largest)
      << "largest difference from PyTorch " << from_torch << " of " << largest;
  EXPECT_LE(ours_off, 2 * torch_off + 1e-7 * largest)
      << "from the float64 result: ours " << ours_off << ", PyTorch's " << torch_off;
  RecordProperty("relative_difference_from_pytorch", fmt::format("{:.3g}", from_torch / largest));
  RecordProperty("ours_from_float64", fmt::format("{:.3g}", ours_off));
  RecordProperty("pytorch_from_float64", fmt::format("{:.3g}", torch_off));
}

INSTANTIATE_TEST_SUITE_P(Examples, ExportedModelTest,
                         ::testing::Values("mlp", "encoder_lm", "gpt2", "alpa_gpt", "resnet"));

TEST(OnnxFileTest, FilesThatAreNotModelsAreNamedErrors) {
  const std::string directory = ::testing::TempDir();
  {
    std::ofstream(directory + "/text.onnx")
        << "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n";
    Result<OnnxFile> file = ReadOnnxFile(directory + "/text.onnx");
    ASSERT_FALSE(file.ok());
    EXPECT_NE(file.status().message().find("not an ONNX model"), std::string::npos)
        << file.status().message();
  }
  {
    std::ifstream in(std::string(ALPA_EXAMPLES_DIR) + "/import/mlp.onnx", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(directory + "/truncated.onnx", std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
    Result<OnnxFile> file = ReadOnnxFile(directory + "/truncated.onnx");
    ASSERT_FALSE(file.ok());
    EXPECT_NE(file.status().message().find("truncated"), std::string::npos)
        << file.status().message();
  }
  {
    Result<OnnxFile> file = ReadOnnxFile(directory + "/absent.onnx");
    ASSERT_FALSE(file.ok());
    EXPECT_NE(file.status().message().find("cannot open"), std::string::npos);
  }
}

TEST(OnnxFileTest, ExternalWeightsAreReadFromTheirFileAndAMissingOneIsNamed) {
  const std::string directory = ::testing::TempDir() + "/external";
  std::filesystem::remove_all(directory);  // a previous run's data file
  std::filesystem::create_directories(directory);
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  ::onnx::TensorProto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(::onnx::TensorProto::FLOAT);
  weight->add_dims(2);
  weight->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = weight->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  auto* offset = weight->add_external_data();
  offset->set_key("offset");
  offset->set_value("4");
  ::onnx::ValueInfoProto* input = model.mutable_graph()->add_input();
  input->set_name("x");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  ::onnx::NodeProto* mul = model.mutable_graph()->add_node();
  mul->set_op_type("Mul");
  mul->set_name("mul");
  mul->add_input("x");
  mul->add_input("w");
  mul->add_output("y");
  model.mutable_graph()->add_output()->set_name("y");
  std::ofstream(directory + "/model.onnx", std::ios::binary) << model.SerializeAsString();

  Result<OnnxFile> missing = ReadOnnxFile(directory + "/model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("w.bin is missing"), std::string::npos)
      << missing.status().message();

  const float values[] = {0, 2.5f, -1};  // 4 bytes of padding, then the tensor
  std::ofstream(directory + "/w.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(values), sizeof(values));
  Result<OnnxFile> file = ReadOnnxFile(directory + "/model.onnx");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ir::ModuleBuilder mb("external");
  ir::ComputationBuilder b = mb.NewComputation("main");
  Result<ImportedGraph> graph = ImportGraph(*file, b, {});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Result<std::vector<ir::Literal>> weights = ReadWeights(*file, *graph);
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  ASSERT_EQ(weights->size(), 1u);
  EXPECT_EQ((*weights)[0].GetDouble(0), 2.5);
  EXPECT_EQ((*weights)[0].GetDouble(1), -1);
}

}  // namespace
}  // namespace alpa::onnx
