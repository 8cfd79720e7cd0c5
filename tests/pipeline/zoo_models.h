// Zoo models for the pipeline tests that slice and mark real losses.
#ifndef ALPA_TESTS_PIPELINE_ZOO_MODELS_H_
#define ALPA_TESTS_PIPELINE_ZOO_MODELS_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "models/zoo.h"

namespace alpa::pipeline::testing {

inline models::ZooModel Zoo(const std::string& name) {
  Result<models::ZooModel> model = models::BuildZooModel(name);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

}  // namespace alpa::pipeline::testing

#endif  // ALPA_TESTS_PIPELINE_ZOO_MODELS_H_
