#include "core/hw_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/field_reader.h"
#include "core/file_util.h"
#include "core/yaml_emit.h"

namespace zinf {
namespace {

double Interpolate(const std::vector<CurvePoint>& c, double x, double fallback) {
  if (c.empty() || x <= 0) return fallback;
  if (x <= c.front().x) return c.front().y;
  if (x >= c.back().x) return c.back().y;
  for (size_t i = 1; i < c.size(); ++i) {
    if (x <= c[i].x) {
      double t = (std::log(x) - std::log(c[i - 1].x)) / (std::log(c[i].x) - std::log(c[i - 1].x));
      return c[i - 1].y + t * (c[i].y - c[i - 1].y);
    }
  }
  return c.back().y;
}

std::vector<CurvePoint> ReadCurve(FieldReader& r, const std::string& key) {
  std::vector<CurvePoint> out;
  for (FieldReader& p : r.MapList(key, /*allow_missing=*/true)) {
    CurvePoint cp;
    cp.x = p.Number("x", 1e-300, 1e30);
    cp.y = p.Number("y", 1e-300, 1e30);
    out.push_back(cp);
  }
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].x <= out[i - 1].x) {
      r.Fail(key, "points must be sorted by strictly increasing x");
      break;
    }
  }
  return out;
}

void WriteCurve(YamlOut& y, const std::string& key, const std::vector<CurvePoint>& c) {
  if (c.empty()) return;
  y.BeginList(key);
  for (const auto& p : c) {
    y.Item();
    y.Key("x", p.x);
    y.Key("y", p.y);
  }
  y.EndList();
}

constexpr double kMaxBytes = 1e18;   // 1 EB: anything above is a typo
constexpr double kMaxBw = 1e14;      // 100 TB/s
constexpr double kMaxFlops = 1e17;   // 100 PFLOP/s per device

}  // namespace

namespace {
// Log-linear in tokens between the `curve` (fwd or bwd) of the counts around `tokens`.
double AtTokens(const std::vector<GemmTokenCurve>& curves, std::vector<CurvePoint> GemmTokenCurve::*curve, double flop,
                double tokens, double fallback) {
  if (tokens <= curves.front().tokens) return Interpolate(curves.front().*curve, flop, fallback);
  if (tokens >= curves.back().tokens) return Interpolate(curves.back().*curve, flop, fallback);
  size_t i = 1;
  while (curves[i].tokens < tokens) ++i;
  const double a = Interpolate(curves[i - 1].*curve, flop, fallback), b = Interpolate(curves[i].*curve, flop, fallback);
  const double t = (std::log(tokens) - std::log(curves[i - 1].tokens)) / (std::log(curves[i].tokens) - std::log(curves[i - 1].tokens));
  return a + t * (b - a);
}
}  // namespace

double HwProfile::GemmRate(double flop, double tokens) const {
  // Log-linear between measured points, flat beyond them (the smallest measured shape's
  // rate for smaller GEMMs: profiles measure down to the shapes small models use).
  const double flat = Interpolate(gemm_curve, flop, achievable_flops);
  if (tokens <= 0 || gemm_token_curves.empty()) return flat;
  return AtTokens(gemm_token_curves, &GemmTokenCurve::fwd, flop, tokens, flat);
}

double HwProfile::AttentionRate(double flop) const {
  return attention_curve.empty() ? 0.0 : Interpolate(attention_curve, flop, 0.0);
}

double HwProfile::SharedCoreSpeed(double working_set) const {
  return std::min(1.0, Interpolate(shared_core_curve, working_set, 1.0));
}

double HwProfile::HotPassBw(double working_set) const {
  return hot_pass_curve.empty() ? memory_bw : Interpolate(hot_pass_curve, working_set, memory_bw);
}

double HwProfile::AttentionFwdRate(double flop) const {
  return attention_fwd_curve.empty() ? 0.0 : Interpolate(attention_fwd_curve, flop, 0.0);
}

double HwProfile::GemmBwdRate(double flop, double tokens) const {
  const double fwd = GemmRate(flop);
  const double flat = gemm_bwd_curve.empty() ? fwd : Interpolate(gemm_bwd_curve, flop, fwd);
  if (tokens <= 0 || gemm_token_curves.empty()) return flat;
  return AtTokens(gemm_token_curves, &GemmTokenCurve::bwd, flop, tokens, flat);
}

namespace {
// A collective's bus bandwidth from a curve: below its first point in proportion (a latency),
// else interpolated; `fallback` without a curve.
double CurveBusBw(const std::vector<CurvePoint>& c, double bytes, double fallback) {
  if (!c.empty() && bytes < c.front().x) return c.front().y * std::max(bytes / c.front().x, 1e-3);
  return Interpolate(c, bytes, fallback);
}
}  // namespace

double HwProfile::AllgatherBusBw(double bytes) const { return CurveBusBw(allgather_curve, bytes, intra_node_bw); }

double HwProfile::ShmBusBw(double bytes, bool reduce_scatter) const {
  return CurveBusBw(reduce_scatter ? shm_reduce_scatter_curve : shm_allgather_curve, bytes, 0.0);
}

namespace {
// Seconds for `bytes` from a curve of seconds by size: per byte interpolated between the
// measured sizes, flat per byte outside them; 0 without the curve.
double PerByteSeconds(const std::vector<CurvePoint>& c, double bytes) {
  if (c.empty() || bytes <= 0) return 0.0;
  std::vector<CurvePoint> per_byte;
  for (const CurvePoint& p : c) per_byte.push_back({p.x, p.y / p.x});
  return bytes * Interpolate(per_byte, bytes, per_byte.back().y);
}
}  // namespace

double HwProfile::ShmCpuBesideSeconds(double bytes, bool reduce_scatter) const {
  return PerByteSeconds(reduce_scatter ? shm_reduce_scatter_cpu_beside_curve : shm_allgather_cpu_beside_curve, bytes);
}

double HwProfile::ShmCpuSeconds(double bytes, bool reduce_scatter) const {
  return PerByteSeconds(reduce_scatter ? shm_reduce_scatter_cpu_curve : shm_allgather_cpu_curve, bytes);
}

double HwProfile::CouplingPerCollective(double between_s, int lanes) const {
  const std::vector<CurvePoint>* c = &coupling_curve;
  if (lanes >= 2 && !coupling_curve_host.empty()) c = &coupling_curve_host;
  if (lanes >= 3 && !coupling_curve_nvme.empty()) c = &coupling_curve_nvme;
  return c->empty() ? 0.0 : Interpolate(*c, std::max(between_s, 1e-12), 0.0);
}

double HwProfile::FetchWakePerFetch(double between_s, bool nvme) const {
  const std::vector<CurvePoint>& c = nvme && !fetch_wake_curve_nvme.empty() ? fetch_wake_curve_nvme : fetch_wake_curve_host;
  return c.empty() ? 0.0 : Interpolate(c, std::max(between_s, 1e-12), 0.0);
}

double HwProfile::NvmeLaneSeconds(double bytes, bool write) const {
  const std::vector<CurvePoint>& c = write ? nvme_lane_write_curve : nvme_lane_read_curve;
  if (c.empty() || bytes <= 0) return 0.0;
  if (bytes < c.front().x) return c.front().x / c.front().y;
  return bytes / Interpolate(c, bytes, c.back().y);
}

const std::vector<std::string>& HwProfileValueKeys() {
  static const std::vector<std::string> keys = {
      "node.gpus_per_node", "node.cpu_cores", "node.host_memory", "node.nvme_capacity",
      "device.memory", "device.peak_flops", "device.achievable_flops", "device.memory_bw",
      "bandwidth.h2d", "bandwidth.d2h", "bandwidth.h2d_alone", "bandwidth.d2h_alone",
      "bandwidth.nvme_read", "bandwidth.nvme_write", "bandwidth.nvme_read_node",
      "bandwidth.nvme_write_node", "bandwidth.host_memory", "network.intra_node",
      "network.inter_node", "network.latency_s", "cpu.adam_params_per_s"};
  return keys;
}

const std::vector<std::string>& HwProfileOptionalValueKeys() {
  static const std::vector<std::string> keys = {"device.gemm_curve_bf16", "device.gemm_bwd_curve", "device.gemm_token_curves", "device.attention_curve", "device.attention_fwd_curve", "device.hot_pass_curve", "device.shared_core_curve",
                                                "node.cpu_sched_slice_s", "node.coupling_curve", "node.coupling_curve_host", "node.coupling_curve_nvme", "node.fetch_wake_curve_host", "node.fetch_wake_curve_nvme", "network.shm_allgather_curve", "network.shm_reduce_scatter_curve", "network.shm_allgather_cpu_beside_curve", "network.shm_reduce_scatter_cpu_beside_curve", "network.shm_allgather_cpu_curve", "network.shm_reduce_scatter_cpu_curve", "device.op_overhead_s", "device.kernel_launch_s", "device.gelu_elems_per_s", "device.gelu_bwd_elems_per_s",
                                                "device.cross_entropy_elems_per_s", "device.cross_entropy_bwd_elems_per_s",
                                                "nvme.cpu_per_request_s", "nvme.cpu_per_byte_s", "nvme.read_latency_s", "nvme.read_latency_busy_s", "nvme.lane_read_curve", "nvme.lane_write_curve"};
  return keys;
}

void ClearCpuKernelFigures(HwProfile& hw) {
  hw.gemm_bwd_curve.clear();
  hw.gemm_token_curves.clear();
  hw.attention_curve.clear();
  hw.attention_fwd_curve.clear();
  hw.hot_pass_curve.clear();
  hw.shared_core_curve.clear();
  hw.op_overhead_s = 0;
  hw.kernel_launch_s = 0;
  hw.gelu_elems_per_s = hw.gelu_bwd_elems_per_s = 0;
  hw.cross_entropy_elems_per_s = hw.cross_entropy_bwd_elems_per_s = 0;
  for (const char* k : {"device.gemm_bwd_curve", "device.gemm_token_curves", "device.attention_curve", "device.attention_fwd_curve", "device.hot_pass_curve",
                        "device.shared_core_curve", "device.op_overhead_s", "device.kernel_launch_s", "device.gelu_elems_per_s", "device.gelu_bwd_elems_per_s",
                        "device.cross_entropy_elems_per_s", "device.cross_entropy_bwd_elems_per_s"})
    hw.provenance.erase(k);
}

Result<HwProfile> LoadHwProfile(const std::string& path) {
  ZINF_ASSIGN_OR_RETURN(YAML::Node node, LoadYamlFile(path));
  FieldReader r(node, path);
  HwProfile hw;
  r.Enum("format", {"zinf.hwprofile/v1"});
  hw.name = r.String("name");
  hw.description = r.String("description", std::string(""));
  hw.backend = r.Enum("backend", {"cuda", "cpu"}, std::string("cuda"));
  FieldReader n = r.Map("node");
  hw.gpus_per_node = n.Int("gpus_per_node", 1, 1024);
  hw.cpu_cores = n.Int("cpu_cores", 1, 1 << 16);
  hw.host_memory_bytes = n.Bytes("host_memory", 1 << 20, kMaxBytes);
  hw.nvme_capacity_bytes = n.Bytes("nvme_capacity", 0, kMaxBytes, 0.0);
  hw.cpu_sched_slice_s = n.Number("cpu_sched_slice_s", 0, 1.0, 0.0);
  hw.coupling_curve = ReadCurve(n, "coupling_curve");
  hw.coupling_curve_host = ReadCurve(n, "coupling_curve_host");
  hw.coupling_curve_nvme = ReadCurve(n, "coupling_curve_nvme");
  hw.fetch_wake_curve_host = ReadCurve(n, "fetch_wake_curve_host");
  hw.fetch_wake_curve_nvme = ReadCurve(n, "fetch_wake_curve_nvme");
  FieldReader d = r.Map("device");
  hw.device_name = d.String("name");
  hw.device_memory_bytes = d.Bytes("memory", 1 << 20, kMaxBytes);
  hw.dtype = d.Enum("dtype", {"fp16", "bf16", "fp32"}, std::string("fp16"));
  hw.peak_flops = d.Flops("peak_flops", 1e6, kMaxFlops);
  hw.achievable_flops = d.Flops("achievable_flops", 1e6, kMaxFlops);
  hw.memory_bw = d.Bandwidth("memory_bw", 1e6, kMaxBw);
  hw.gemm_curve = ReadCurve(d, "gemm_curve");
  hw.gemm_curve_bf16 = ReadCurve(d, "gemm_curve_bf16");
  hw.gemm_bwd_curve = ReadCurve(d, "gemm_bwd_curve");
  for (FieldReader& t : d.MapList("gemm_token_curves", /*allow_missing=*/true)) {
    GemmTokenCurve c;
    c.tokens = t.Number("tokens", 1, 1e12);
    c.fwd = ReadCurve(t, "curve");
    c.bwd = ReadCurve(t, "bwd_curve");
    if (c.fwd.empty() || c.bwd.empty()) t.Fail("curve", "each token count needs a curve and a bwd_curve");
    if (!hw.gemm_token_curves.empty() && c.tokens <= hw.gemm_token_curves.back().tokens)
      t.Fail("tokens", "gemm_token_curves must be sorted by strictly increasing tokens");
    hw.gemm_token_curves.push_back(std::move(c));
  }
  hw.attention_curve = ReadCurve(d, "attention_curve");
  hw.attention_fwd_curve = ReadCurve(d, "attention_fwd_curve");
  hw.hot_pass_curve = ReadCurve(d, "hot_pass_curve");
  hw.shared_core_curve = ReadCurve(d, "shared_core_curve");
  for (const CurvePoint& p : hw.shared_core_curve)
    if (p.y > 1.0) {
      d.Fail("shared_core_curve", "y is a ratio to one thread alone: at most 1");
      break;
    }
  hw.op_overhead_s = d.Number("op_overhead_s", 0, 1.0, 0.0);
  hw.kernel_launch_s = d.Number("kernel_launch_s", 0, 1.0, 0.0);
  hw.gelu_elems_per_s = d.Number("gelu_elems_per_s", 0, 1e15, 0.0);
  hw.gelu_bwd_elems_per_s = d.Number("gelu_bwd_elems_per_s", 0, 1e15, 0.0);
  hw.cross_entropy_elems_per_s = d.Number("cross_entropy_elems_per_s", 0, 1e15, 0.0);
  hw.cross_entropy_bwd_elems_per_s = d.Number("cross_entropy_bwd_elems_per_s", 0, 1e15, 0.0);
  if (hw.achievable_flops > hw.peak_flops * 1.0001)
    d.Fail("achievable_flops", "must not exceed device.peak_flops");
  FieldReader b = r.Map("bandwidth");
  hw.h2d_bw = b.Bandwidth("h2d", 1e3, kMaxBw);
  hw.d2h_bw = b.Bandwidth("d2h", 1e3, kMaxBw);
  hw.h2d_bw_alone = b.Bandwidth("h2d_alone", 1e3, kMaxBw, hw.h2d_bw);
  hw.d2h_bw_alone = b.Bandwidth("d2h_alone", 1e3, kMaxBw, hw.d2h_bw);
  hw.nvme_read_bw = b.Bandwidth("nvme_read", 0, kMaxBw, 0.0);
  hw.nvme_write_bw = b.Bandwidth("nvme_write", 0, kMaxBw, 0.0);
  hw.nvme_read_bw_node = b.Bandwidth("nvme_read_node", 0, kMaxBw, hw.nvme_read_bw * static_cast<double>(hw.gpus_per_node));
  hw.nvme_write_bw_node = b.Bandwidth("nvme_write_node", 0, kMaxBw, hw.nvme_write_bw * static_cast<double>(hw.gpus_per_node));
  hw.host_mem_bw = b.Bandwidth("host_memory", 1e3, kMaxBw);
  FieldReader net = r.Map("network");
  hw.intra_node_bw = net.Bandwidth("intra_node", 1e3, kMaxBw);
  hw.inter_node_bw = net.Bandwidth("inter_node", 0, kMaxBw, 0.0);
  hw.collective_latency_s = net.Number("latency_s", 0, 1.0, 0.0);
  hw.allgather_curve = ReadCurve(net, "allgather_curve");
  hw.shm_allgather_curve = ReadCurve(net, "shm_allgather_curve");
  hw.shm_reduce_scatter_curve = ReadCurve(net, "shm_reduce_scatter_curve");
  hw.shm_allgather_cpu_beside_curve = ReadCurve(net, "shm_allgather_cpu_beside_curve");
  hw.shm_reduce_scatter_cpu_beside_curve = ReadCurve(net, "shm_reduce_scatter_cpu_beside_curve");
  hw.shm_allgather_cpu_curve = ReadCurve(net, "shm_allgather_cpu_curve");
  hw.shm_reduce_scatter_cpu_curve = ReadCurve(net, "shm_reduce_scatter_cpu_curve");
  FieldReader c = r.Map("cpu");
  hw.cpu_adam_params_per_s = c.Number("adam_params_per_s", 1e3, 1e13);
  FieldReader io = r.Map("nvme", /*allow_missing=*/true);
  hw.nvme_block_size = io.Int("block_size", 4096, int64_t{1} << 30, int64_t{1} << 20);
  hw.nvme_queue_depth = io.Int("queue_depth", 1, 4096, 8);
  hw.nvme_cpu_per_request_s = io.Number("cpu_per_request_s", 0, 1.0, 0.0);
  hw.nvme_read_latency_s = io.Number("read_latency_s", 0, 1.0, 0.0);
  hw.nvme_read_latency_busy_s = io.Number("read_latency_busy_s", 0, 1.0, 0.0);
  hw.nvme_cpu_per_byte_s = io.Number("cpu_per_byte_s", 0, 1e-3, 0.0);
  hw.nvme_lane_read_curve = ReadCurve(io, "lane_read_curve");
  hw.nvme_lane_write_curve = ReadCurve(io, "lane_write_curve");
  hw.nvme_lane_read_beside_adam = io.Number("lane_read_beside_adam", 0, 1e3, 0.0);
  hw.nvme_lane_write_beside_adam = io.Number("lane_write_beside_adam", 0, 1e3, 0.0);
  hw.nvme_adam_beside_lane = io.Number("adam_beside_lane", 0, 1e3, 0.0);
  if (hw.nvme_block_size % 4096 != 0) io.Fail("block_size", "must be a multiple of 4096");
  if (r.Has("provenance")) {
    FieldReader p = r.Map("provenance");
    YAML::Node pn = node["provenance"];
    if (pn.IsMap()) {
      for (auto it = pn.begin(); it != pn.end(); ++it) {
        if (!it->first.IsScalar()) continue;  // Finish() reports it as an unknown key
        std::string key = it->first.Scalar();
        hw.provenance[key] = p.String(key);
      }
    }
  } else {
    r.Ignore("provenance");  // "provenance:" with no entries
  }
  ZINF_RETURN_IF_ERROR(r.Finish());
  return hw;
}

std::string HwProfileToYaml(const HwProfile& hw) {
  YamlOut y;
  y.Comment("zinf hardware profile. Bandwidths are bytes/s per GPU with all GPUs of a node active");
  y.Comment("unless the key says _alone (one GPU) or _node (node aggregate).");
  y.Key("format", "zinf.hwprofile/v1");
  y.Key("name", hw.name);
  if (!hw.description.empty()) y.Key("description", hw.description);
  y.Key("backend", hw.backend);
  y.Begin("node");
  y.Key("gpus_per_node", hw.gpus_per_node);
  y.Key("cpu_cores", hw.cpu_cores);
  y.Key("host_memory", hw.host_memory_bytes);
  y.Key("nvme_capacity", hw.nvme_capacity_bytes);
  if (hw.cpu_sched_slice_s > 0) y.Key("cpu_sched_slice_s", hw.cpu_sched_slice_s);
  WriteCurve(y, "coupling_curve", hw.coupling_curve);
  WriteCurve(y, "coupling_curve_host", hw.coupling_curve_host);
  WriteCurve(y, "coupling_curve_nvme", hw.coupling_curve_nvme);
  WriteCurve(y, "fetch_wake_curve_host", hw.fetch_wake_curve_host);
  WriteCurve(y, "fetch_wake_curve_nvme", hw.fetch_wake_curve_nvme);
  y.End();
  y.Begin("device");
  y.Key("name", hw.device_name);
  y.Key("memory", hw.device_memory_bytes);
  y.Key("dtype", hw.dtype);
  y.Key("peak_flops", hw.peak_flops);
  y.Key("achievable_flops", hw.achievable_flops);
  y.Key("memory_bw", hw.memory_bw);
  WriteCurve(y, "gemm_curve", hw.gemm_curve);
  WriteCurve(y, "gemm_curve_bf16", hw.gemm_curve_bf16);
  WriteCurve(y, "gemm_bwd_curve", hw.gemm_bwd_curve);
  if (!hw.gemm_token_curves.empty()) {
    y.BeginList("gemm_token_curves");
    for (const GemmTokenCurve& c : hw.gemm_token_curves) {
      y.Item();
      y.Key("tokens", c.tokens);
      WriteCurve(y, "curve", c.fwd);
      WriteCurve(y, "bwd_curve", c.bwd);
    }
    y.EndList();
  }
  WriteCurve(y, "attention_curve", hw.attention_curve);
  WriteCurve(y, "attention_fwd_curve", hw.attention_fwd_curve);
  WriteCurve(y, "hot_pass_curve", hw.hot_pass_curve);
  WriteCurve(y, "shared_core_curve", hw.shared_core_curve);
  if (hw.op_overhead_s > 0) y.Key("op_overhead_s", hw.op_overhead_s);
  if (hw.kernel_launch_s > 0) y.Key("kernel_launch_s", hw.kernel_launch_s);
  if (hw.gelu_elems_per_s > 0) y.Key("gelu_elems_per_s", hw.gelu_elems_per_s);
  if (hw.gelu_bwd_elems_per_s > 0) y.Key("gelu_bwd_elems_per_s", hw.gelu_bwd_elems_per_s);
  if (hw.cross_entropy_elems_per_s > 0) y.Key("cross_entropy_elems_per_s", hw.cross_entropy_elems_per_s);
  if (hw.cross_entropy_bwd_elems_per_s > 0) y.Key("cross_entropy_bwd_elems_per_s", hw.cross_entropy_bwd_elems_per_s);
  y.End();
  y.Begin("bandwidth");
  y.Key("h2d", hw.h2d_bw);
  y.Key("d2h", hw.d2h_bw);
  y.Key("h2d_alone", hw.h2d_bw_alone);
  y.Key("d2h_alone", hw.d2h_bw_alone);
  y.Key("nvme_read", hw.nvme_read_bw);
  y.Key("nvme_write", hw.nvme_write_bw);
  y.Key("nvme_read_node", hw.nvme_read_bw_node);
  y.Key("nvme_write_node", hw.nvme_write_bw_node);
  y.Key("host_memory", hw.host_mem_bw);
  y.End();
  y.Begin("network");
  y.Key("intra_node", hw.intra_node_bw);
  y.Key("inter_node", hw.inter_node_bw);
  y.Key("latency_s", hw.collective_latency_s);
  WriteCurve(y, "allgather_curve", hw.allgather_curve);
  WriteCurve(y, "shm_allgather_curve", hw.shm_allgather_curve);
  WriteCurve(y, "shm_reduce_scatter_curve", hw.shm_reduce_scatter_curve);
  WriteCurve(y, "shm_allgather_cpu_beside_curve", hw.shm_allgather_cpu_beside_curve);
  WriteCurve(y, "shm_reduce_scatter_cpu_beside_curve", hw.shm_reduce_scatter_cpu_beside_curve);
  WriteCurve(y, "shm_allgather_cpu_curve", hw.shm_allgather_cpu_curve);
  WriteCurve(y, "shm_reduce_scatter_cpu_curve", hw.shm_reduce_scatter_cpu_curve);
  y.End();
  y.Begin("cpu");
  y.Key("adam_params_per_s", hw.cpu_adam_params_per_s);
  y.End();
  y.Begin("nvme");
  y.Key("block_size", hw.nvme_block_size);
  y.Key("queue_depth", hw.nvme_queue_depth);
  if (hw.nvme_cpu_per_request_s > 0) y.Key("cpu_per_request_s", hw.nvme_cpu_per_request_s);
  if (hw.nvme_read_latency_s > 0) y.Key("read_latency_s", hw.nvme_read_latency_s);
  if (hw.nvme_read_latency_busy_s > 0) y.Key("read_latency_busy_s", hw.nvme_read_latency_busy_s);
  if (hw.nvme_cpu_per_byte_s > 0) y.Key("cpu_per_byte_s", hw.nvme_cpu_per_byte_s);
  WriteCurve(y, "lane_read_curve", hw.nvme_lane_read_curve);
  WriteCurve(y, "lane_write_curve", hw.nvme_lane_write_curve);
  if (hw.nvme_lane_read_beside_adam > 0) y.Key("lane_read_beside_adam", hw.nvme_lane_read_beside_adam);
  if (hw.nvme_lane_write_beside_adam > 0) y.Key("lane_write_beside_adam", hw.nvme_lane_write_beside_adam);
  if (hw.nvme_adam_beside_lane > 0) y.Key("adam_beside_lane", hw.nvme_adam_beside_lane);
  y.End();
  if (!hw.provenance.empty()) {
    y.Begin("provenance");
    for (const auto& [k, v] : hw.provenance) y.Key(k, v);
    y.End();
  }
  return y.str();
}

Status SaveHwProfile(const HwProfile& hw, const std::string& path) {
  return WriteFileAtomic(path, HwProfileToYaml(hw));
}

}  // namespace zinf
