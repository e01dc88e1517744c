#include <atomic>
#include <vector>

#include <gtest/gtest.h>

#include "core/thread_pool.h"

namespace hb {
namespace {

TEST(ThreadPool, RunsEveryTaskOnceRepeatedly) {
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::atomic<int>> hits(97);
    pool.parallel_for(97, [&](int64_t t, int worker) {
      ASSERT_GE(worker, 0);
      ASSERT_LT(worker, 3);
      hits[t]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  pool.parallel_for(0, [](int64_t, int) { FAIL(); });
}

// A parallel_for from inside one of the same pool's tasks (a strategy's load using the global
// pool from code that may itself run as a task) runs inline on that worker: every task of both
// levels runs once, and the outer call is not clobbered.

TEST(ThreadPool, NestedCallRunsInlineOnTheWorker) {
  ThreadPool pool(2);
  ThreadPool other(2);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> outer(7), inner(7 * 13), elsewhere(7 * 5);
    pool.parallel_for(7, [&](int64_t t, int worker) {
      outer[t]++;
      pool.parallel_for(13, [&](int64_t u, int inner_worker) {
        ASSERT_EQ(inner_worker, 0);  // inline: the nested call's only worker
        inner[t * 13 + u]++;
      });
      (void)worker;
    });
    for (auto& h : outer) ASSERT_EQ(h.load(), 1);
    for (auto& h : inner) ASSERT_EQ(h.load(), 1);
    // Another pool's call from a task is not nested in it: it runs on that pool as usual.
    pool.parallel_for(7, [&](int64_t t, int) {
      if (t == 0) other.parallel_for(35, [&](int64_t u, int) { elsewhere[u]++; });
    });
    for (auto& h : elsewhere) ASSERT_EQ(h.load(), 1);
  }
}

}  // namespace
}  // namespace hb
