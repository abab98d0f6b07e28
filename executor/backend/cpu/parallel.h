// OpenMP helpers: a static partition of [0, n) into contiguous chunks, one per
// thread, so each index is always handled by the same code path regardless of
// scheduling. Falls back to serial below `min_work` items or without OpenMP.
#pragma once

#include <algorithm>
#include <cstddef>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace zinf::cpu {

// fn(begin, end) over contiguous chunks of [0, n).
template <typename Fn>
void ParallelChunks(size_t n, int threads, size_t min_work, Fn&& fn) {
  if (n == 0) return;
  int nt = threads < 1 ? 1 : threads;
  if (n < min_work) nt = 1;
  if (static_cast<size_t>(nt) > n) nt = static_cast<int>(n);
#if defined(_OPENMP)
  if (nt > 1) {
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      const int team = omp_get_num_threads();
      const size_t chunk = (n + team - 1) / team;
      const size_t b = std::min(n, chunk * t);
      const size_t e = std::min(n, b + chunk);
      if (b < e) fn(b, e);
    }
    return;
  }
#endif
  fn(size_t{0}, n);
}

// Thread index inside ParallelChunks (0 when serial).
inline int ThreadIndex() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace zinf::cpu
