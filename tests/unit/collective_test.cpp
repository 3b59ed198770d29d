// The collectives' definitions against nccl-tests' (src/*.cu GetCollByteCount and GetBw, on fixed
// inputs), the values their checks expect, a corrupted element found, the inputs' period, the
// implementations of each collective, and what crosses a worker's pipe for a gang.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cluster/gang.h"
#include "cluster/worker_messages.h"
#include "kernels/common/fp16.h"
#include "kernels/nccl/collective.h"
#include "support/kernels.h"

namespace ks::collective {
namespace {

const CollectiveSpec& spec(const std::string& name) {
  const CollectiveSpec* found = find_collective(name);
  if (!found) throw std::runtime_error("no collective " + name);
  return *found;
}

// nccl-tests' figures for one size: what its -b 1M float run with 8 ranks prints and computes.
TEST(Collectives, CountsAndBandwidthsAreNcclTests) {
  const std::size_t elements = (1 << 20) / 4;  // 1 MiB of float
  const double seconds = 1e-3;
  const auto bandwidths = [&](const std::string& name, int members) {
    const Counts counts = spec(name).counts(elements, 4, members);
    const double algorithm = spec(name).algorithm_bytes(counts, 4, members) / 1e9 / seconds;
    return std::pair{algorithm, algorithm * spec(name).bus_factor(members)};
  };
  // all_reduce: count elements each way; algbw = count*size/t, busbw x 2(n-1)/n.
  EXPECT_EQ(spec("all_reduce").counts(elements, 4, 8).param, elements);
  EXPECT_DOUBLE_EQ(bandwidths("all_reduce", 8).first, 1.048576);
  EXPECT_DOUBLE_EQ(bandwidths("all_reduce", 8).second, 1.048576 * 14 / 8);
  // all_gather: (count/n) rounded down to 16 bytes sent, n times that received; busbw x (n-1)/n.
  const Counts gather = spec("all_gather").counts(elements, 4, 3);
  EXPECT_EQ(gather.param, (elements / 3) & ~std::size_t{3});
  EXPECT_EQ(gather.recv, gather.param * 3);
  EXPECT_EQ(gather.send_in_place_offset, gather.param);
  EXPECT_DOUBLE_EQ(bandwidths("all_gather", 3).first, static_cast<double>(gather.param * 4 * 3) / 1e9 / seconds);
  EXPECT_DOUBLE_EQ(bandwidths("all_gather", 3).second, bandwidths("all_gather", 3).first * 2 / 3);
  // reduce_scatter: n blocks sent, one received in place at its block.
  const Counts scatter = spec("reduce_scatter").counts(elements, 2, 8);
  EXPECT_EQ(scatter.param, elements / 8);
  EXPECT_EQ(scatter.send, scatter.param * 8);
  EXPECT_EQ(scatter.recv_in_place_offset, scatter.param);
  EXPECT_DOUBLE_EQ(bandwidths("reduce_scatter", 8).second, bandwidths("reduce_scatter", 8).first * 7 / 8);
  // alltoall: blocks of (count/n) rounded down, n of them each way; busbw x (n-1)/n.
  const Counts all = spec("alltoall").counts(1000, 8, 3);
  EXPECT_EQ(all.param, 332u);  // 333 rounded down to a multiple of 16 bytes of 8-byte elements
  EXPECT_EQ(all.send, 996u);
  EXPECT_DOUBLE_EQ(bandwidths("alltoall", 4).second, bandwidths("alltoall", 4).first * 3 / 4);
  // broadcast: busbw = algbw.
  EXPECT_DOUBLE_EQ(bandwidths("broadcast", 8).first, 1.048576);
  EXPECT_DOUBLE_EQ(bandwidths("broadcast", 8).second, 1.048576);
}

TEST(Collectives, ExpectedValuesFollowTheInputsOfEveryMember) {
  Setting s;
  s.members = 4;
  s.me = 2;
  s.reduction = true;
  s.op = ReduceOp::sum;
  const Counts counts = spec("all_reduce").counts(16, 4, 4);
  double sum = 0;
  for (int member = 0; member < 4; ++member) sum += input_value(5, member, s);
  EXPECT_EQ(spec("all_reduce").expected(5, counts, s), sum);
  s.op = ReduceOp::prod;
  EXPECT_EQ(spec("all_reduce").expected(5, counts, s), 2);  // ones, and one two
  s.op = ReduceOp::max;
  EXPECT_EQ(spec("all_reduce").expected(5, counts, s), 3);
  // all_gather: element j of member q's slot is q's element j.
  Setting moved;
  moved.members = 3;
  moved.me = 0;
  const Counts gather = spec("all_gather").counts(48, 4, 3);
  EXPECT_EQ(spec("all_gather").expected(gather.param + 1, gather, moved), input_value(1, 1, moved));
  // alltoall: member 2's block 1 is member 1's block 2.
  moved.me = 2;
  const Counts all = spec("alltoall").counts(48, 4, 3);
  EXPECT_EQ(spec("alltoall").expected(all.param + 3, all, moved), input_value(2 * all.param + 3, 1, moved));
  // broadcast: the root's input.
  moved.root = 1;
  EXPECT_EQ(spec("broadcast").expected(7, all, moved), input_value(7, 1, moved));
}

TEST(Collectives, ACorruptedElementIsCounted) {
  for (const DataType type : {DataType::fp32, DataType::bf16, DataType::fp16, DataType::int8, DataType::fp64}) {
    Setting s;
    s.members = 4;
    s.me = 1;
    s.reduction = true;
    s.type = type;
    const CollectiveSpec& all_reduce = spec("all_reduce");
    const Counts counts = all_reduce.counts(64, size_of(type), 4);
    std::vector<unsigned char> received(counts.recv * size_of(type));
    for (std::size_t i = 0; i < counts.recv; ++i)
      write_element(received.data(), i, type, all_reduce.expected(i, counts, s));
    std::string first;
    EXPECT_EQ(count_wrong_elements(all_reduce, counts, s, received.data(), first), 0);
    write_element(received.data(), 17, type, all_reduce.expected(17, counts, s) + 1);
    write_element(received.data(), 40, type, all_reduce.expected(40, counts, s) + 2);
    EXPECT_EQ(count_wrong_elements(all_reduce, counts, s, received.data(), first), 2);
    EXPECT_NE(first.find("element 17"), std::string::npos) << first;
  }
}

TEST(Fp16, BitsAreIeeeBinary16RoundedToNearestEven) {
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7BFF);  // rounds down to the largest
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(float_to_fp16_bits(1.0f / 3), 0x3555);
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -24)), 0x0001);             // the smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -25)), 0x0000);             // a tie to even: zero
  EXPECT_EQ(float_to_fp16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // a tie to even: 1
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // a tie to even: up
  EXPECT_EQ(float_to_fp16_bits(INFINITY), 0x7C00);
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(float_to_fp16_bits(NAN))));
  for (std::uint32_t bits = 0; bits < 0x7C00; ++bits)  // every finite half comes back as itself
    EXPECT_EQ(float_to_fp16_bits(fp16_bits_to_float(static_cast<std::uint16_t>(bits))), bits) << bits;
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_bits_to_float(0xC000), -2.0f);
}

TEST(Collectives, AverageAllowsForRoundingAndNothingMore) {
  Setting s;
  s.members = 3;
  s.reduction = true;
  s.op = ReduceOp::avg;
  s.type = DataType::fp32;
  const double expected = reduced_input(2, s);
  EXPECT_GT(tolerance(expected, s), 0);
  EXPECT_LT(tolerance(expected, s), 1e-4);
  s.op = ReduceOp::sum;
  EXPECT_EQ(tolerance(reduced_input(2, s), s), 0);  // small sums are exact
}

TEST(Collectives, InputsRepeatEveryInputPeriod) {
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::max}) {
    for (const bool reduction : {false, true}) {
      const Setting s{.members = 5,
                      .me = 0,
                      .root = 0,
                      .op = op,
                      .type = DataType::fp32,
                      .in_place = false,
                      .reduction = reduction};
      const std::size_t period = input_period(s);
      for (int member = 0; member < 5; ++member)
        for (std::size_t i = 0; i < 200; ++i)
          ASSERT_EQ(input_value(i, member, s), input_value(i + period, member, s))
              << i << " " << member << " " << period;
    }
  }
  // The period is the shortest: a period shorter by one breaks somewhere.
  const Setting gathered{.members = 3, .reduction = false};
  bool differs = false;
  for (std::size_t i = 0; i < 200; ++i)
    differs = differs || input_value(i, 1, gathered) != input_value(i + 60, 1, gathered);
  EXPECT_TRUE(differs);
}

TEST(Collectives, EachCollectiveHasAnMpiAndTwoNcclImplementations) {
  for (const std::string name : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"}) {
    const KernelSpec& kernel = testing::builtin_kernel(name);
    ASSERT_NE(kernel.implementation("mpi"), nullptr) << name;
    EXPECT_EQ(kernel.implementation("mpi")->backend, Backend::cpu) << name;
    for (const std::string implementation : {"nccl", "nccl_graph"}) {
      ASSERT_NE(kernel.implementation(implementation), nullptr) << name << " " << implementation;
      EXPECT_EQ(kernel.implementation(implementation)->backend, Backend::cuda) << name << " " << implementation;
    }
    EXPECT_NE(find_collective(name), nullptr) << name;
  }
  EXPECT_EQ(transport_of("mpi"), Transport::mpi);
  EXPECT_EQ(transport_of("nccl"), Transport::nccl);
  EXPECT_EQ(transport_of("nccl_graph"), Transport::nccl_graph);
}

// What crosses a worker's pipe for a gang: the seat in the request, the wrong elements in the result
// (absent, and read back as -1, for other kernels).
TEST(Collectives, AGangSeatAndTheWrongElementsCrossTheWorkersPipe) {
  MeasureRequest request;
  request.point.kernel = "all_reduce";
  request.point.implementation = "nccl";
  request.point.mode = "run";
  request.point.params = {{"bytes", 4096}};
  request.gang = GangSeat{{0, 3, 5}, 2, std::string(256, 'a'), 12.5};
  const MeasureRequest back = decode_request(nlohmann::json::parse(encode(request)));
  ASSERT_TRUE(back.gang.has_value());
  EXPECT_EQ(back.gang->members, (std::vector<int>{0, 3, 5}));
  EXPECT_EQ(back.gang->me, 2);
  EXPECT_EQ(back.gang->nccl_id, std::string(256, 'a'));
  EXPECT_EQ(back.gang->timeout_s, 12.5);
  request.gang.reset();
  EXPECT_FALSE(decode_request(nlohmann::json::parse(encode(request))).gang.has_value());

  MeasureResult result;
  result.record.status = "failed";
  result.record.wrong_elements = 7;
  EXPECT_EQ(decode_result(nlohmann::json::parse(encode(result))).record.wrong_elements, 7);
  result.record.wrong_elements = -1;
  const std::string plain = encode(result);
  EXPECT_EQ(plain.find("wrong_elements"), std::string::npos) << plain;
  EXPECT_EQ(decode_result(nlohmann::json::parse(plain)).record.wrong_elements, -1);
}

// A rank's request for work names the gangs' communicators it lost since it last asked (rank 0 then
// starts a new generation of each); bytes cut short are refused.
TEST(Collectives, TheCommunicatorsARankLostCrossItsRequestForWork) {
  const std::vector<std::vector<int>> lost{{0, 1}, {2, 3, 5, 7}};
  const std::string bytes = encode_member_sets(lost);
  EXPECT_EQ(decode_member_sets(bytes), lost);
  EXPECT_TRUE(decode_member_sets(encode_member_sets({})).empty());
  EXPECT_TRUE(decode_member_sets("").empty()) << "a request that names none";
  for (std::size_t cut = 1; cut < bytes.size(); ++cut)
    EXPECT_THROW(decode_member_sets(bytes.substr(0, cut)), std::runtime_error) << cut;
}

}  // namespace
}  // namespace ks::collective
