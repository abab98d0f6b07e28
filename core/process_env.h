// Process environment fix-ups done before any library reads its settings.
#pragma once

namespace zinf {

// OpenMP threads that spin while waiting starve the other threads of a small box (the
// compute stream, the transfer lanes, other ranks): a step can run 10x slower. libgomp
// reads OMP_WAIT_POLICY when it loads, so when the variable is unset this sets it to
// "passive" and re-executes the program (same pid, same arguments; once). A user's own
// setting is kept. Returns only when no re-exec happened (or it failed).
// With it, unless GOMP_SPINCOUNT is set, a bounded spin (kOpenMpSpinCount, a few hundred
// microseconds on the 2-core VM) before a team's threads sleep: a thread that slept longer than
// the guest's halt-polling window (200 us) halts its vCPU, and waking it costs the next
// parallel kernel ~55 us instead of ~6 (docs/performance-model.md, parallel kernels).
inline constexpr const char* kOpenMpSpinCount = "30000";
void EnsurePassiveOpenMpWait(char** argv);

}  // namespace zinf

namespace zinf {

// Names the calling thread "zinf:<name>" (truncated to the kernel's 15 characters), so that
// top -H, perf and /proc/PID/task/*/comm tell the compute stream, the transfer lanes and the
// comm worker apart. Best effort: a failure is ignored.
void SetThreadName(const char* name);

}  // namespace zinf
