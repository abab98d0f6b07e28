// Catalog: resolves `--model gpt3-175b` / `--hw dgx2-v100` to the shipped YAML files.
// A value that names an existing file is used as it is; otherwise it is looked up as
// models/<name>.yaml (hwprofiles/<name>.yaml) under $ZINF_DATA_DIR, then the source tree.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace zinf {

std::string DataDir();  // $ZINF_DATA_DIR or the source tree zinf was built from
Result<std::string> ResolveModelPath(const std::string& name_or_path);
Result<std::string> ResolveHwPath(const std::string& name_or_path);
std::vector<std::string> ListCatalog(const std::string& subdir);  // names without .yaml

}  // namespace zinf
