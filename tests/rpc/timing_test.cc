// TimeCalls follows the timing protocol of docs/ARCHITECTURE.md §10. The tests
// count calls and watch each timed run through the flush hook (which runs
// right before every timed run); the only facts about time they check are
// ones the protocol guarantees (an accepted repeat lasted min_repeat_ms).
#include "rpc/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kiln::rpc {
namespace {

search::TimingConfig Config(int number, int repeat, double min_repeat_ms, bool flush) {
  search::TimingConfig c;
  c.number = number;
  c.repeat = repeat;
  c.min_repeat_ms = min_repeat_ms;
  c.flush_cache = flush;
  return c;
}

// Records the number of calls before each flush, so that consecutive
// differences are the sizes of the timed runs.
struct Recorder {
  int64_t calls = 0;
  std::vector<int64_t> calls_at_flush;
  std::vector<int64_t> RunSizes() const {
    std::vector<int64_t> sizes;
    for (size_t i = 0; i < calls_at_flush.size(); ++i) {
      int64_t end = i + 1 < calls_at_flush.size() ? calls_at_flush[i + 1] : calls;
      sizes.push_back(end - calls_at_flush[i]);
    }
    return sizes;
  }
};

TEST(TimingTest, WarmUpThenRepeatTimesNumberCalls) {
  int64_t calls = 0;
  // Each call sleeps, so every measured mean is positive for certain.
  auto call = [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  };
  std::vector<double> secs = TimeCalls(call, Config(4, 3, 0, false), {});
  EXPECT_EQ(calls, 1 + 4 * 3);
  ASSERT_EQ(secs.size(), 3u);
  for (double s : secs) EXPECT_GE(s, 20e-6);
}

TEST(TimingTest, FlushRunsBeforeEveryTimedRunOnlyWhenEnabled) {
  Recorder rec;
  auto call = [&] { ++rec.calls; };
  auto flush = [&] { rec.calls_at_flush.push_back(rec.calls); };
  std::vector<double> secs = TimeCalls(call, Config(2, 5, 0, true), flush);
  EXPECT_EQ(secs.size(), 5u);
  // The warm-up call comes first, then flush, 2 calls, flush, 2 calls, ...
  EXPECT_EQ(rec.calls_at_flush, (std::vector<int64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(rec.calls, 11);

  Recorder off;
  TimeCalls([&] { ++off.calls; }, Config(2, 5, 0, false),
            [&] { off.calls_at_flush.push_back(off.calls); });
  EXPECT_TRUE(off.calls_at_flush.empty());
  EXPECT_EQ(off.calls, 11);
}

TEST(TimingTest, FlushEnabledWithoutAFlushFunction) {
  int64_t calls = 0;
  EXPECT_EQ(TimeCalls([&] { ++calls; }, Config(1, 2, 0, true), {}).size(), 2u);
  EXPECT_EQ(calls, 3);
}

TEST(TimingTest, NumberGrowsUntilARepeatLastsMinRepeatMs) {
  const double min_repeat_ms = 30;
  const int repeat = 3;
  Recorder rec;
  auto call = [&] { ++rec.calls; };
  auto flush = [&] { rec.calls_at_flush.push_back(rec.calls); };
  auto start = std::chrono::steady_clock::now();
  std::vector<double> secs = TimeCalls(call, Config(1, repeat, min_repeat_ms, true), flush);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(secs.size(), static_cast<size_t>(repeat));

  std::vector<int64_t> sizes = rec.RunSizes();
  ASSERT_GE(sizes.size(), static_cast<size_t>(repeat));
  EXPECT_EQ(sizes.front(), 1);  // starts at config.number
  // `number` only grows, and carries over from one repeat to the next.
  for (size_t i = 1; i < sizes.size(); ++i) EXPECT_GE(sizes[i], sizes[i - 1]) << i;
  EXPECT_EQ(rec.calls, 1 + std::accumulate(sizes.begin(), sizes.end(), int64_t{0}));
  // One increment cannot fill 30 ms: the first run was too short and number grew.
  EXPECT_GT(sizes.size(), static_cast<size_t>(repeat));
  EXPECT_GT(sizes.back(), 1);
  // The last `repeat` runs are the accepted ones; each lasted min_repeat_ms
  // (mean per call times calls), so the whole took at least repeat times that.
  for (int r = 0; r < repeat; ++r) {
    int64_t n = sizes[sizes.size() - repeat + r];
    EXPECT_GE(secs[r] * static_cast<double>(n), min_repeat_ms / 1000 * 0.999) << r;
    EXPECT_GT(secs[r], 0);
  }
  EXPECT_GE(total, repeat * min_repeat_ms / 1000 * 0.999);
}

// A call of kLongCallSecs or more is its own warm-up: the warm-up is the
// first repeat and every repeat is one call, whatever `number` says.
TEST(TimingTest, ALongCallIsTimedOncePerRepeat) {
  const auto long_call = std::chrono::duration<double>(kLongCallSecs * 1.05);
  Recorder rec;
  auto call = [&] {
    ++rec.calls;
    std::this_thread::sleep_for(long_call);
  };
  auto flush = [&] { rec.calls_at_flush.push_back(rec.calls); };
  std::vector<double> secs = TimeCalls(call, Config(3, 1, 100, true), flush);
  EXPECT_EQ(rec.calls, 1);
  ASSERT_EQ(secs.size(), 1u);
  EXPECT_GE(secs[0], kLongCallSecs);
  EXPECT_TRUE(rec.calls_at_flush.empty());  // the warm-up is never preceded by a flush

  Recorder two;
  secs = TimeCalls(
      [&] {
        ++two.calls;
        std::this_thread::sleep_for(long_call);
      },
      Config(3, 2, 100, true), [&] { two.calls_at_flush.push_back(two.calls); });
  EXPECT_EQ(two.calls, 2);
  ASSERT_EQ(secs.size(), 2u);
  EXPECT_EQ(two.calls_at_flush, (std::vector<int64_t>{1}));  // before the second repeat
  for (double s : secs) EXPECT_GE(s, kLongCallSecs);
}

// A call the caller just made is the warm-up: none is made here, and a
// long one is the first repeat, at the caller's length for "long".
TEST(TimingTest, TheCallersFirstCallIsTheWarmUp) {
  int64_t calls = 0;
  auto call = [&] { ++calls; };
  std::vector<double> secs = TimeCalls(call, Config(4, 3, 0, false), {}, {0.001, kLongCallSecs});
  EXPECT_EQ(calls, 4 * 3);
  EXPECT_EQ(secs.size(), 3u);

  calls = 0;
  secs = TimeCalls(call, Config(4, 2, 10, false), {}, {0.05, 0.04});
  EXPECT_EQ(calls, 1);  // the second repeat; the first is the caller's call
  ASSERT_EQ(secs.size(), 2u);
  EXPECT_EQ(secs[0], 0.05);

  // Shorter than min_repeat_ms is not long, whatever the caller's length.
  calls = 0;
  secs = TimeCalls(call, Config(4, 1, 0.1, false), {}, {0.00005, 0.00001});
  EXPECT_GE(calls, 4);
  ASSERT_EQ(secs.size(), 1u);
  EXPECT_NE(secs[0], 0.00005);

  for (TimingStart bad : {TimingStart{std::nan(""), 1.0}, TimingStart{0.1, 0.0},
                          TimingStart{0.1, -1.0}, TimingStart{0.1, HUGE_VAL}}) {
    EXPECT_THROW(TimeCalls(call, Config(1, 1, 0, false), {}, bad), std::invalid_argument);
  }
}

TEST(TimingTest, WithTheRealCacheFlush) {
  int64_t calls = 0;
  std::vector<double> secs = TimeCalls([&] { ++calls; }, Config(3, 2, 0, true), FlushCpuCache);
  EXPECT_EQ(secs.size(), 2u);
  EXPECT_EQ(calls, 1 + 3 * 2);
  for (double s : secs) EXPECT_GE(s, 0);
}

TEST(TimingTest, RejectsBadConfigsBeforeCalling) {
  int64_t calls = 0;
  auto call = [&] { ++calls; };
  for (const search::TimingConfig& c :
       {Config(0, 1, 0, false), Config(1, 0, 0, false), Config(-3, 1, 0, false),
        Config(1, 1, -1, false), Config(1, 1, std::nan(""), false), Config(1, 1, HUGE_VAL, false)}) {
    EXPECT_THROW(TimeCalls(call, c, {}), std::invalid_argument);
  }
  EXPECT_EQ(calls, 0);
  try {
    TimeCalls(call, Config(0, 2, 5, false), {});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("number 0"), std::string::npos) << e.what();
  }
}

TEST(TimingTest, AFailingCallStopsTiming) {
  int64_t calls = 0;
  auto call = [&] {
    if (++calls == 3) throw std::runtime_error("kernel returned 7");
  };
  EXPECT_THROW(TimeCalls(call, Config(5, 2, 0, false), {}), std::runtime_error);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace kiln::rpc
