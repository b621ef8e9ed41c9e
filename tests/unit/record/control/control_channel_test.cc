#include "record/control/control_channel.h"

#include <poll.h>

#include <thread>

#include <gtest/gtest.h>

namespace sample::record {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(ControlChannelTest, CommandsPostedFromAnotherThreadWakeThePollAndComeInOrder) {
  auto channel = ControlChannel::Create();
  ASSERT_TRUE(channel) << channel.error().message;
  EXPECT_FALSE(Readable(channel->fd()));
  std::thread poster([&] {
    channel->Post({ControlCommand::Kind::kDisable, "cycles"});
    channel->Post({ControlCommand::Kind::kSnapshot, ""});
    channel->Post({ControlCommand::Kind::kStop, ""});
  });
  poster.join();
  EXPECT_TRUE(Readable(channel->fd()));
  const std::vector<ControlCommand> commands = channel->Take();
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[0].kind, ControlCommand::Kind::kDisable);
  EXPECT_EQ(commands[0].event, "cycles");
  EXPECT_EQ(commands[1].kind, ControlCommand::Kind::kSnapshot);
  EXPECT_EQ(commands[2].kind, ControlCommand::Kind::kStop);
  // Taken: the fd is quiet until the next post.
  EXPECT_FALSE(Readable(channel->fd()));
  EXPECT_TRUE(channel->Take().empty());
}

}  // namespace
}  // namespace sample::record
