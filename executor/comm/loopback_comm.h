// LoopbackComm: a Comm of size 1 (single-process runs, unit tests). Same semantics and
// comm thread as every Comm; collectives reduce to copies.
#pragma once

#include "executor/comm/comm.h"

namespace zinf {

class LoopbackComm : public Comm {
 public:
  explicit LoopbackComm(const CommOptions& options = {}) : Comm(options) {}
  ~LoopbackComm() override { StopWorker(); }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "loopback"; }

 protected:
  Status Execute(const CollArgs& args) override;
};

}  // namespace zinf
