// libFuzzer harness for zinf's file readers: the input bytes become a file that the reader
// chosen at compile time (-DZINF_FUZZ_READER=1..5) loads. Any Status is fine; a crash, hang,
// leak, sanitizer report or escaped exception is a bug. Built and run by scripts/fuzz.sh.
//   1 model YAML (LoadModelSpec)  2 Hugging Face config.json (LoadModelSpec, JSON seeds)
//   3 hardware profile (LoadHwProfile)  4 plan (LoadPlan)  5 DeepSpeed ds_config (ParseDsConfig)
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/ds_config.h"
#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

#ifndef ZINF_FUZZ_READER
#error "define ZINF_FUZZ_READER (1 model, 2 hf, 3 hw, 4 plan, 5 ds_config)"
#endif

namespace {

// One scratch file per process (libFuzzer runs inputs one after the other), in the RAM-backed
// /dev/shm when there is one.
const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/zinf-fuzz-" + std::to_string(getpid()) + ".yaml";
  }();
  return path;
}

void WriteScratch(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (f == nullptr) abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) abort();
  std::fclose(f);
}

// Round trip: what a writer produced from an accepted file must read back (else the writer
// emits files zinf itself rejects: a bug worth a crash).
template <typename Load>
void ExpectReloads(const std::string& text, Load load) {
  const std::string path = ScratchPath() + ".rt";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) abort();
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  auto r = load(path);
  if (!r.ok()) {
    std::fprintf(stderr, "round trip failed: %s\n--- written ---\n%s\n", r.status().ToString().c_str(), text.c_str());
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 20)) return -1;  // real files are kilobytes; keep the fuzzer fast
#if ZINF_FUZZ_READER == 5
  std::string text(reinterpret_cast<const char*>(data), size);
  zinf::Result<zinf::DsConfig> c = zinf::ParseDsConfig(text, "fuzz.json");
  if (c.ok()) (void)zinf::DsPlacementFor(*c, "fuzz.json");
#else
  WriteScratch(data, size);
#if ZINF_FUZZ_READER == 1 || ZINF_FUZZ_READER == 2
  zinf::Result<zinf::ModelSpec> m = zinf::LoadModelSpec(ScratchPath());
  if (m.ok()) {
    (void)zinf::CountParams(*m);
    ExpectReloads(zinf::ModelSpecToYaml(*m), [](const std::string& q) { return zinf::LoadModelSpec(q); });
  }
#elif ZINF_FUZZ_READER == 3
  zinf::Result<zinf::HwProfile> hw = zinf::LoadHwProfile(ScratchPath());
  if (hw.ok()) {
    (void)hw->GemmRate(1e9);
    (void)hw->AllgatherBusBw(1e6);
    ExpectReloads(zinf::HwProfileToYaml(*hw), [](const std::string& q) { return zinf::LoadHwProfile(q); });
  }
#elif ZINF_FUZZ_READER == 4
  zinf::Result<zinf::Plan> p = zinf::LoadPlan(ScratchPath());
  if (p.ok()) ExpectReloads(zinf::PlanToYaml(*p), [](const std::string& q) { return zinf::LoadPlan(q); });
#endif
#endif
  return 0;
}
