// Process environment fix-ups done before any library reads its settings.
#pragma once

namespace zinf {

// OpenMP threads that spin while waiting starve the other threads of a small box (the
// compute stream, the transfer lanes, other ranks): a step can run 10x slower. libgomp
// reads OMP_WAIT_POLICY when it loads, so when the variable is unset this sets it to
// "passive" and re-executes the program (same pid, same arguments; once). A user's own
// setting is kept. Returns only when no re-exec happened (or it failed).
void EnsurePassiveOpenMpWait(char** argv);

}  // namespace zinf

namespace zinf {

// Names the calling thread "zinf:<name>" (truncated to the kernel's 15 characters), so that
// top -H, perf and /proc/PID/task/*/comm tell the compute stream, the transfer lanes and the
// comm worker apart. Best effort: a failure is ignored.
void SetThreadName(const char* name);

}  // namespace zinf
