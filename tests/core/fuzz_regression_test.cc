// Fuzz regressions: every file under tests/core/data/fuzz_regressions/<reader>/ (inputs the
// libFuzzer harnesses in tests/fuzz/ found or that were added as nasty seeds) must give a clean
// error naming the file: no crash, no exception, no sanitizer report.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/ds_config.h"
#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "tests/core/test_util.h"

namespace zinf {
namespace {

Status Load(const std::string& reader, const std::string& path) {
  if (reader == "model" || reader == "hf") return LoadModelSpec(path).status();
  if (reader == "hw") return LoadHwProfile(path).status();
  if (reader == "plan") return LoadPlan(path).status();
  if (reader == "ds_config") {
    Result<DsConfig> c = LoadDsConfig(path);
    if (!c.ok()) return c.status();
    return DsPlacementFor(*c, path).status();
  }
  return Internal("unknown reader " + reader);
}

TEST(FuzzRegressions, EveryInputGivesACleanError) {
  const std::string root = testing::SourceDir() + "/tests/core/data/fuzz_regressions";
  int n = 0;
  for (const char* reader : {"model", "hf", "hw", "plan", "ds_config"}) {
    const std::string dir = root + "/" + reader;
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << dir;
    for (const auto& f : files) {
      SCOPED_TRACE(f);
      std::optional<Status> st;
      ASSERT_NO_THROW(st.emplace(Load(reader, f)));
      EXPECT_FALSE(st->ok()) << "accepted";
      EXPECT_NE(st->message().find(f), std::string::npos) << st->ToString();
      EXPECT_LT(st->message().size(), 2000u) << st->message().substr(0, 300);
      EXPECT_EQ(ExitCodeFor(*st), 2) << st->ToString();
      ++n;
    }
  }
  EXPECT_GT(n, 20);
}

}  // namespace
}  // namespace zinf
