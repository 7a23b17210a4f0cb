// The initial sync's progress line: objects listed so far while the lists
// run, one line when the view is complete, nothing for a feed that loads at
// once.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include <gtest/gtest.h>

#include "test/integration/watch_support.h"
#include "webhook/log.h"
#include "webhook/sync_progress.h"

namespace placer {
namespace {

class ListingFeed : public ClusterFeed {
 public:
  Outcome start(ClusterState&) override { return {}; }
  void stop() override {}
  bool synced() const override { return synced_; }
  std::string describe() const override { return "test"; }
  std::vector<KindProgress> syncProgress() const override {
    if (!reports_) return {};
    std::lock_guard lock(mutex_);
    return {{"nodes", nodes_, nodesDone_}, {"pods", pods_, synced_}};
  }
  void set(uint64_t nodes, bool nodesDone, uint64_t pods) {
    std::lock_guard lock(mutex_);
    nodes_ = nodes, nodesDone_ = nodesDone, pods_ = pods;
  }
  std::atomic<bool> synced_{false};
  bool reports_ = true;

 private:
  mutable std::mutex mutex_;
  uint64_t nodes_ = 0, pods_ = 0;
  bool nodesDone_ = false;
};

class SyncProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    setLogOutput(file_);
  }
  void TearDown() override {
    setLogOutput(stderr);
    std::fclose(file_);
  }
  std::string logged() {
    std::fflush(file_);
    long size = std::ftell(file_);
    std::string text(static_cast<size_t>(size), '\0');
    std::rewind(file_);
    text.resize(std::fread(text.data(), 1, text.size(), file_));
    std::fseek(file_, 0, SEEK_END);
    return text;
  }
  std::FILE* file_ = nullptr;
};

TEST_F(SyncProgressTest, LinesWhileListingThenOneWhenComplete) {
  ListingFeed feed;
  feed.set(5000, true, 12000);
  SyncProgressLog progress(feed, std::chrono::milliseconds(10));
  ASSERT_TRUE(watchtest::waitFor([&] { return logged().find("\"pods\":12000") != std::string::npos; },
                                 std::chrono::seconds(10)))
      << logged();
  std::string during = logged();
  EXPECT_NE(during.find("\"msg\":\"initial sync\",\"nodes\":5000,\"objectsPerSecond\":"), std::string::npos) << during;
  EXPECT_EQ(during.find("initial sync complete"), std::string::npos);

  feed.set(5000, true, 150000);
  feed.synced_ = true;
  ASSERT_TRUE(progress.waitSynced(std::chrono::seconds(10)));
  std::string after = logged();
  EXPECT_NE(after.find("\"msg\":\"initial sync complete\",\"nodes\":5000,\"pods\":150000,\"seconds\":"),
            std::string::npos)
      << after;
}

TEST_F(SyncProgressTest, AFeedThatLoadsAtOnceLogsNothing) {
  ListingFeed feed;
  feed.reports_ = false;
  feed.synced_ = true;
  SyncProgressLog progress(feed, std::chrono::milliseconds(1));
  ASSERT_TRUE(progress.waitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(logged(), "");
}

TEST_F(SyncProgressTest, StopsWhenDestroyedBeforeTheSync) {
  ListingFeed feed;
  { SyncProgressLog progress(feed, std::chrono::hours(1)); }
  EXPECT_EQ(logged(), "");
}

}  // namespace
}  // namespace placer
