#include "report/load/allocations.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace sample::report {
namespace {

constexpr uint32_t kMalloc = 1, kRealloc = 2, kNew = 3, kCalloc = 4, kMmap = 5;
constexpr uint32_t kPid = 100;

void Enter(Allocations& a, uint32_t tid, uint32_t function, uint64_t size,
           std::optional<uint64_t> old_ptr, size_t handle,
           std::optional<uint64_t> sp = std::nullopt, uint32_t pid = kPid) {
  AllocCall call{pid, tid, function, size, old_ptr, sp};
  call.handle = handle;
  a.Enter(call);
}

std::vector<size_t> Handles(const std::vector<AllocBlock>& blocks) {
  std::vector<size_t> out;
  for (const AllocBlock& b : blocks) out.push_back(b.handle);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AllocationsTest, PairsACallWithItsReturnAndItsFree) {
  Allocations a;
  Enter(a, 7, kMalloc, 100, std::nullopt, 0);
  const auto block = a.Return(kPid, 7, kMalloc, 10, 0x1000);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->handle, 0u);
  EXPECT_EQ(block->size, 100u);
  EXPECT_EQ(a.stats().live_bytes, 100u);
  a.Free(kPid, 7, 20, 0x1000);
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_EQ(a.stats().frees, 1u);
  EXPECT_TRUE(a.LiveBlocks().empty());
  EXPECT_TRUE(a.TakeDropped().empty());
}

TEST(AllocationsTest, AFreeOfAnUnknownPointerIsCountedApartNotAsANegativeLeak) {
  Allocations a;
  a.Free(kPid, 7, 5, 0x9000);  // allocated before the recording began
  Enter(a, 7, kMalloc, 50, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  EXPECT_EQ(a.stats().unknown_frees, 1u);
  EXPECT_EQ(a.stats().frees, 0u);
  EXPECT_EQ(a.stats().live_bytes, 50u);
  EXPECT_EQ(a.LiveBlocks().size(), 1u);
  a.Free(kPid, 7, 20, 0);  // free(NULL) frees nothing and is nothing unknown
  EXPECT_EQ(a.stats().unknown_frees, 1u);
}

// mmap's anonymous memory is a block until munmap; munmap of memory never
// seen mapped (a file) is no unknown free; glibc's free of a large block
// unmaps the chunk just below the pointer, which is that free's.
TEST(AllocationsTest, MunmapEndsAnMmapBlockAndOthersAreCountedApart) {
  Allocations a;
  Enter(a, 7, kMmap, 1 << 20, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMmap, 10, 0x7f0000000000));
  EXPECT_EQ(a.stats().live_bytes, 1u << 20);
  a.Free(kPid, 7, 20, 0x7f0000000000, /*unmap=*/true);
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_EQ(a.stats().frees, 1u);
  a.Free(kPid, 7, 30, 0x7e0000000000, /*unmap=*/true);  // a file's mapping
  EXPECT_EQ(a.stats().foreign_unmaps, 1u);
  EXPECT_EQ(a.stats().unknown_frees, 0u);

  // malloc's large block: its mmap nested in malloc, free's munmap of the
  // chunk 16 bytes below the pointer after the free.
  Enter(a, 7, kMalloc, 200000, std::nullopt, 1);
  Enter(a, 7, kMmap, 204800, std::nullopt, 2);
  EXPECT_FALSE(a.Return(kPid, 7, kMmap, 40, 0x7d0000000000));
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 41, 0x7d0000000010));
  a.Free(kPid, 7, 50, 0x7d0000000010);
  a.Free(kPid, 7, 51, 0x7d0000000000, /*unmap=*/true);
  EXPECT_EQ(a.stats().frees, 2u);
  EXPECT_EQ(a.stats().nested, 2u);
  EXPECT_EQ(a.stats().foreign_unmaps, 1u);
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_TRUE(a.LiveBlocks().empty());
}

TEST(AllocationsTest, AReallocThatMovesEndsTheOldBlockAndStartsANewOne) {
  Allocations a;
  Enter(a, 7, kMalloc, 40, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  Enter(a, 7, kRealloc, 400, 0x1000, 1);
  // glibc's realloc may call malloc and free itself: nested, once.
  Enter(a, 7, kMalloc, 400, std::nullopt, 2);
  ASSERT_FALSE(a.Return(kPid, 7, kMalloc, 11, 0x2000));
  a.Free(kPid, 7, 12, 0x1000);
  const auto block = a.Return(kPid, 7, kRealloc, 13, 0x2000);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->handle, 1u);
  EXPECT_EQ(block->size, 400u);
  EXPECT_EQ(a.stats().live_bytes, 400u);
  EXPECT_EQ(a.stats().live_blocks, 1u);
  EXPECT_EQ(a.stats().allocations, 2u);
  EXPECT_EQ(a.stats().frees, 1u);
  EXPECT_EQ(a.stats().nested, 2u);
  EXPECT_EQ(Handles(a.LiveBlocks()), std::vector<size_t>({1}));
  EXPECT_EQ(a.TakeDropped(), std::vector<size_t>({2}));
}

TEST(AllocationsTest, AReallocInPlaceKeepsOneBlockOfTheNewSize) {
  Allocations a;
  Enter(a, 7, kMalloc, 40, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  Enter(a, 7, kRealloc, 30, 0x1000, 1);
  ASSERT_TRUE(a.Return(kPid, 7, kRealloc, 11, 0x1000));
  EXPECT_EQ(a.stats().live_bytes, 30u);
  EXPECT_EQ(Handles(a.LiveBlocks()), std::vector<size_t>({1}));
}

TEST(AllocationsTest, AReallocToSizeZeroFreesAndReturnsNull) {
  Allocations a;
  Enter(a, 7, kMalloc, 40, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  Enter(a, 7, kRealloc, 0, 0x1000, 1);
  EXPECT_FALSE(a.Return(kPid, 7, kRealloc, 11, 0));
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_EQ(a.stats().frees, 1u);
  EXPECT_TRUE(a.LiveBlocks().empty());
  EXPECT_EQ(a.TakeDropped(), std::vector<size_t>({1}));
}

TEST(AllocationsTest, AFailedReallocKeepsTheOldBlock) {
  Allocations a;
  Enter(a, 7, kMalloc, 40, std::nullopt, 0);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  Enter(a, 7, kRealloc, 1ull << 62, 0x1000, 1);
  EXPECT_FALSE(a.Return(kPid, 7, kRealloc, 11, 0));
  EXPECT_EQ(a.stats().live_bytes, 40u);
  EXPECT_EQ(a.stats().failed, 1u);
}

TEST(AllocationsTest, ACallocOverflowThatReturnsNullIsNoBlock) {
  Allocations a;
  Enter(a, 7, kCalloc, UINT64_MAX, std::nullopt, 0);
  EXPECT_FALSE(a.Return(kPid, 7, kCalloc, 10, 0));
  EXPECT_EQ(a.stats().failed, 1u);
  EXPECT_EQ(a.stats().allocations, 0u);
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_EQ(a.TakeDropped(), std::vector<size_t>({0}));
}

TEST(AllocationsTest, ThreadsFreeWhatOthersAllocated) {
  Allocations a;
  Enter(a, 1, kMalloc, 10, std::nullopt, 0);
  Enter(a, 2, kMalloc, 20, std::nullopt, 1);  // interleaved with thread 1's call
  ASSERT_TRUE(a.Return(kPid, 2, kMalloc, 10, 0x2000));
  ASSERT_TRUE(a.Return(kPid, 1, kMalloc, 11, 0x1000));
  a.Free(kPid, 2, 12, 0x1000);
  a.Free(kPid, 1, 13, 0x2000);
  EXPECT_EQ(a.stats().frees, 2u);
  EXPECT_EQ(a.stats().unknown_frees, 0u);
  EXPECT_EQ(a.stats().live_bytes, 0u);
  EXPECT_EQ(a.stats().nested, 0u);
}

TEST(AllocationsTest, OperatorNewAndDeleteCountOnceAroundMallocAndFree) {
  Allocations a;
  Enter(a, 7, kNew, 24, std::nullopt, 0);
  Enter(a, 7, kMalloc, 24, std::nullopt, 1);
  EXPECT_FALSE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  const auto block = a.Return(kPid, 7, kNew, 11, 0x1000);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->handle, 0u);
  a.Free(kPid, 7, 12, 0x1000);  // operator delete
  a.Free(kPid, 7, 13, 0x1000);  // the free it calls
  EXPECT_EQ(a.stats().frees, 1u);
  EXPECT_EQ(a.stats().unknown_frees, 0u);
  EXPECT_EQ(a.stats().allocations, 1u);
}

TEST(AllocationsTest, AReturnWhoseCallWasNotRecordedIsIgnored) {
  Allocations a;
  // -c 2: operator new's call was recorded, malloc's inside it was not.
  Enter(a, 7, kNew, 24, std::nullopt, 0);
  EXPECT_FALSE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  ASSERT_TRUE(a.Return(kPid, 7, kNew, 11, 0x1000));
  EXPECT_EQ(a.stats().allocations, 1u);
  EXPECT_EQ(a.stats().unpaired, 0u);
}

TEST(AllocationsTest, CallsWhoseReturnsWereLostAreUnpaired) {
  Allocations a;
  Enter(a, 7, kNew, 24, std::nullopt, 0);
  Enter(a, 7, kMalloc, 24, std::nullopt, 1);
  // malloc's return was lost; operator new's pairs with its own call.
  ASSERT_TRUE(a.Return(kPid, 7, kNew, 11, 0x1000));
  Enter(a, 8, kMalloc, 8, std::nullopt, 2);
  a.Exited(8);
  Enter(a, 9, kMalloc, 8, std::nullopt, 3);  // still in flight at the end
  std::vector<size_t> dropped = a.TakeDropped();
  std::sort(dropped.begin(), dropped.end());
  EXPECT_EQ(dropped, std::vector<size_t>({1, 2, 3}));
  EXPECT_EQ(a.stats().unpaired, 3u);
}

TEST(AllocationsTest, ThePeakIsTheLiveSetWhenTheTotalWasLargest) {
  Allocations a;
  size_t handle = 0;
  auto alloc = [&](uint64_t size, uint64_t ptr, uint64_t time) {
    Enter(a, 7, kMalloc, size, std::nullopt, handle++);
    ASSERT_TRUE(a.Return(kPid, 7, kMalloc, time, ptr));
  };
  alloc(100, 0x1, 1);  // 0
  alloc(200, 0x2, 2);  // 1
  a.Free(kPid, 7, 3, 0x1);
  alloc(500, 0x3, 4);  // 2: peak 700 = {1, 2}
  a.Free(kPid, 7, 5, 0x3);
  alloc(300, 0x4, 6);  // 3: 500, below the peak
  EXPECT_EQ(a.stats().peak_bytes, 700u);
  EXPECT_EQ(a.stats().peak_time, 4u);
  EXPECT_EQ(Handles(a.PeakBlocks()), std::vector<size_t>({1, 2}));
  EXPECT_EQ(Handles(a.LiveBlocks()), std::vector<size_t>({1, 3}));
}

TEST(AllocationsTest, ThePeakAndTheLeaksSurviveCompaction) {
  Allocations a;
  size_t handle = 0;
  // 10,000 short-lived blocks around a peak of 3 long-lived ones.
  for (uint64_t i = 0; i < 5000; ++i) {
    Enter(a, 7, kMalloc, 8, std::nullopt, handle++);
    ASSERT_TRUE(a.Return(kPid, 7, kMalloc, i, 0x100));
    a.Free(kPid, 7, i, 0x100);
  }
  for (uint64_t p = 1; p <= 3; ++p) {
    Enter(a, 7, kMalloc, 1000, std::nullopt, handle++);
    ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 6000, 0x10000 * p));
  }
  a.Free(kPid, 7, 6001, 0x30000);
  for (uint64_t i = 0; i < 5000; ++i) {
    Enter(a, 7, kMalloc, 8, std::nullopt, handle++);
    ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 7000 + i, 0x100));
    a.Free(kPid, 7, 7000 + i, 0x100);
  }
  EXPECT_EQ(a.stats().peak_bytes, 3000u);
  EXPECT_EQ(Handles(a.PeakBlocks()), std::vector<size_t>({5000, 5001, 5002}));
  EXPECT_EQ(Handles(a.LiveBlocks()), std::vector<size_t>({5000, 5001}));
  EXPECT_EQ(a.stats().live_bytes, 2000u);
}

TEST(AllocationsTest, BlocksOfTwoProcessesAtOneAddressAreTwoBlocks) {
  // A forked child hands out the addresses its parent does.
  Allocations a;
  Enter(a, 1, kMalloc, 1000, std::nullopt, 0, std::nullopt, /*pid=*/1);
  ASSERT_TRUE(a.Return(1, 1, kMalloc, 10, 0x1000));
  Enter(a, 2, kMalloc, 1000, std::nullopt, 1, std::nullopt, /*pid=*/2);
  ASSERT_TRUE(a.Return(2, 2, kMalloc, 11, 0x1000));
  a.Free(1, 1, 12, 0x1000);  // the parent frees its own
  EXPECT_EQ(a.stats().live_blocks, 1u);
  EXPECT_EQ(Handles(a.LiveBlocks()), std::vector<size_t>({1}));  // the child's leaks
  EXPECT_EQ(a.stats().peak_bytes, 2000u);
}

TEST(AllocationsTest, ALaterCallAtOrAboveTheStackPointerEndsCallsWhoseReturnsWereLost) {
  Allocations a;
  Enter(a, 7, kMalloc, 8, std::nullopt, 0, /*sp=*/0x7000);   // its return was lost
  Enter(a, 7, kMalloc, 16, std::nullopt, 1, /*sp=*/0x7000);  // the loop's next call
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 10, 0x1000));
  Enter(a, 7, kNew, 24, std::nullopt, 2, /*sp=*/0x7000);
  Enter(a, 7, kMalloc, 24, std::nullopt, 3, /*sp=*/0x6fe0);  // inside operator new
  EXPECT_FALSE(a.Return(kPid, 7, kMalloc, 11, 0x2000));
  ASSERT_TRUE(a.Return(kPid, 7, kNew, 12, 0x2000));
  EXPECT_EQ(a.stats().unpaired, 1u);
  EXPECT_EQ(a.stats().nested, 1u);
  EXPECT_EQ(a.stats().allocations, 2u);
}

TEST(AllocationsTest, CallsThatNeverReturnAreBoundedPerThread) {
  Allocations a;
  for (size_t i = 0; i < 10 * Allocations::kMaxInFlight; ++i) {
    Enter(a, 7, kMalloc, 8, std::nullopt, i);  // no stack pointers, no returns
  }
  EXPECT_EQ(a.stats().unpaired, 9 * Allocations::kMaxInFlight);
  EXPECT_EQ(a.TakeDropped().size(), 10 * Allocations::kMaxInFlight);
}

TEST(AllocationsTest, WeightsCountEachCallAsTheCallsItStandsFor) {
  Allocations a;
  AllocCall call{kPid, 7, kMalloc, 100};
  call.weight = 10;  // -c 10
  a.Enter(call);
  const auto block = a.Return(kPid, 7, kMalloc, 10, 0x1000);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->weight, 10u);
  EXPECT_EQ(a.stats().allocations, 10u);
  EXPECT_EQ(a.stats().live_bytes, 1000u);
  EXPECT_EQ(a.stats().live_blocks, 10u);
}

TEST(AllocationsTest, CompactionForgetsBlocksFreedAfterThePeak) {
  Allocations a;
  size_t handle = 0;
  Enter(a, 7, kMalloc, 1'000'000, std::nullopt, handle++);
  ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 1, 0x100));
  a.Free(kPid, 7, 2, 0x100);  // the peak, over
  for (uint64_t i = 0; i < 100'000; ++i) {
    Enter(a, 7, kMalloc, 8, std::nullopt, handle++);
    ASSERT_TRUE(a.Return(kPid, 7, kMalloc, 3 + i, 0x200));
    a.Free(kPid, 7, 3 + i, 0x200);
  }
  EXPECT_EQ(Handles(a.PeakBlocks()), std::vector<size_t>({0}));
  EXPECT_TRUE(a.LiveBlocks().empty());
  EXPECT_LT(a.kept_blocks(), 8192u);
}

}  // namespace
}  // namespace sample::report
