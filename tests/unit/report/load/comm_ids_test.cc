#include "report/load/comm_ids.h"

#include <gtest/gtest.h>

namespace sample::report {
namespace {

TEST(CommIdsTest, EachThreadsNameUntilARenameAndThreadsOfOneNameShareIt) {
  ProcessTable processes;
  Profile profile;
  processes.ApplyComm(10, 10, "server", /*exec=*/true);
  processes.ApplyComm(10, 11, "worker", /*exec=*/false);
  processes.ApplyComm(20, 20, "server", /*exec=*/true);
  CommIds ids;
  const uint32_t server = ids.Of(10, 10, processes, profile);
  const uint32_t worker = ids.Of(10, 11, processes, profile);
  EXPECT_EQ(profile.comm(server), "server");
  EXPECT_EQ(profile.comm(worker), "worker");
  EXPECT_EQ(ids.Of(20, 20, processes, profile), server);  // one name, one id
  EXPECT_EQ(ids.Of(10, 11, processes, profile), worker);  // the last thread's, again
  // A rename (prctl, exec) is seen at the next sample of that thread.
  processes.ApplyComm(10, 11, "flusher", /*exec=*/false);
  const uint32_t renamed = ids.Of(10, 11, processes, profile);
  EXPECT_EQ(profile.comm(renamed), "flusher");
  EXPECT_EQ(ids.Of(10, 10, processes, profile), server);
}

}  // namespace
}  // namespace sample::report
