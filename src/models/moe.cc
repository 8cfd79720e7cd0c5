#include "models/moe.h"

namespace alpa::models {

Result<Model> BuildMoe(const MoeConfig&) { return Unimplemented("moe: not built yet"); }

}  // namespace alpa::models
