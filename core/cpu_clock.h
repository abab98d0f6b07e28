// CPU time of threads, the process and the node (Linux), for measured-vs-modelled CPU use:
// on the CPU backend the "device", the lanes and the optimizer share the same cores, so
// where a step's CPU went is what the time model is checked against.
#pragma once

#include <pthread.h>

namespace zinf {

double CurrentThreadCpuSeconds();          // user + system of the calling thread
double ThreadCpuSeconds(pthread_t thread);  // of a live thread of this process; 0 if unknown
double ProcessCpuSeconds();                // every thread of this process

// The node's CPU time from /proc/stat (all cores, in seconds): busy (everything but idle and
// iowait) and total. Both 0 where /proc/stat cannot be read.
struct NodeCpuTimes {
  double busy_s = 0, total_s = 0;
};
NodeCpuTimes ReadNodeCpuTimes();

}  // namespace zinf
