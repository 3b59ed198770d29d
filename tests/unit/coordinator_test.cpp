// Rank 0's side of a sweep without MPI: the other ranks are played in the test, through a
// CoordinatorLink that keeps what rank 0 answers them.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/coordinator.h"
#include "config/parse.h"
#include "plan/plan.h"
#include "plan/point_enumerator.h"
#include "support/kernels.h"

namespace ks {
namespace {

using testing::builtin_registry;

// Three shapes of two modes each: six points in three groups, all measured on the CPU.
const char* const kSweep =
    "name: coordinated\n"
    "kernels: [{kernel: rms_norm, implementations: [cpu], modes: [forward, backward],\n"
    "           grid: {tokens: [64, 128, 256], hidden: [64]}}]\n";

// The plan as rank 0 holds it, its points added as a run adds them; `ids`, every point's.
struct Plans {
  SweepSpec spec = parse_sweep_text(kSweep, "coordinated.yaml", builtin_registry());
  PointEnumerator points{spec, builtin_registry()};
  WorkPlan work{builtin_registry(), [this](const PointSource& source) { return points.group_at(source); }};
  std::set<std::string> ids;

  Plans() {
    for_each_point(points, spec, builtin_registry(), PlanOptions{}, [this](Point& point, std::size_t group) {
      work.add(point, group);
      ids.insert(point.id());
      return true;
    });
    work.seal();
  }
};

FromRank message_of(FromRank::Kind kind, int rank) {
  FromRank message;
  message.kind = kind;
  message.rank = rank;
  return message;
}

// The other ranks' messages, queued by the test, and rank 0's answers to each rank.
class LocalLink : public CoordinatorLink {
 public:
  void ask(int rank) { inbox_.push_back(message_of(FromRank::Kind::work_request, rank)); }
  void send_result(int rank, const Point& point) {
    FromRank message = message_of(FromRank::Kind::result, rank);
    message.record.point_id = point.id();
    message.record.status = "passed";
    message.protocol = &protocol_;
    message.implementation = &implementation_;
    inbox_.push_back(std::move(message));
  }
  void say_stopped(int rank, const std::string& why) {
    FromRank message = message_of(FromRank::Kind::stopped, rank);
    message.text = why;
    inbox_.push_back(std::move(message));
  }

  std::optional<FromRank> receive(bool results) override {
    const auto next = std::find_if(inbox_.begin(), inbox_.end(), [&](const FromRank& message) {
      return results || message.kind == FromRank::Kind::work_request || message.kind == FromRank::Kind::heartbeat;
    });
    if (next == inbox_.end()) return std::nullopt;
    FromRank message = std::move(*next);
    inbox_.erase(next);
    return message;
  }
  void answer(int rank, const std::vector<Assigned>& points) override { answers[rank].push_back(points); }
  void tell_stop(int rank) override { stopped.insert(rank); }
  void tell_still_parked(int) override {}

  std::map<int, std::vector<std::vector<Assigned>>> answers;
  std::set<int> stopped;

 private:
  std::vector<FromRank> inbox_;
  const nlohmann::json protocol_ = {{"name", "do_bench"}};
  const nlohmann::json implementation_ = nullptr;
};

class RecordingSink : public ResultSink {
 public:
  void on_start(const std::vector<RankIdentity>&) override {}
  void on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json&,
                 std::optional<RecordDocuments>) override {
    ids.push_back(record.point_id);
    protocols.push_back(protocol);
  }
  void on_tick() override {}
  void on_left_skipped(std::size_t) override {}
  bool takes_records() const override { return taking; }

  std::vector<std::string> ids;
  std::vector<nlohmann::json> protocols;
  bool taking = true;  // false: a store that is behind
};

std::vector<RankIdentity> cpu_ranks(int count) {
  std::vector<RankIdentity> ranks(static_cast<std::size_t>(count));
  for (int rank = 0; rank < count; ++rank) {
    ranks[rank].rank = rank;
    ranks[rank].host.hostname = "node-" + std::to_string(rank);
  }
  return ranks;
}

struct CoordinatedRun {
  Plans plans;
  RunOptions options;
  LocalLink link;
  RecordingSink sink;
  GangCommunicators gangs;
  std::unique_ptr<Coordinator> coordinator;

  explicit CoordinatedRun(bool exclude_slow = false) {
    options.registry = &builtin_registry();
    options.exclude_slow = exclude_slow;
    coordinator = std::make_unique<Coordinator>(plans.work, options, cpu_ranks(3), link, sink, gangs);
  }

  // Ranks 1 and 2 ask, measure what they are handed and ask again, until rank 0 has nothing for
  // them; rank 0 measures nothing itself. The ids handed to each rank.
  std::map<int, std::vector<std::string>> play_ranks() {
    std::map<int, std::vector<std::string>> handed;
    std::set<int> done;
    link.ask(1);
    link.ask(2);
    for (int round = 0; round < 100 && done.size() < 2; ++round) {
      coordinator->serve();
      for (int rank : {1, 2}) {
        auto& answers = link.answers[rank];
        if (answers.empty()) continue;
        const std::vector<Assigned> points = answers.back();
        answers.pop_back();
        if (points.empty()) {
          done.insert(rank);
          continue;
        }
        for (const Assigned& assigned : points) {
          handed[rank].push_back(assigned.point.id());
          link.send_result(rank, assigned.point);
        }
        link.ask(rank);
      }
    }
    return handed;
  }
};

TEST(Coordinator, AnswersRequestsWhileTheSinkTakesNoRecordsAndTakesTheResultsOnceItDoes) {
  CoordinatedRun run;
  run.coordinator->start({});
  run.sink.taking = false;
  const auto handed = run.play_ranks();
  std::size_t points = 0;
  for (const auto& [rank, ids] : handed) points += ids.size();
  EXPECT_EQ(points, run.plans.ids.size());  // every point granted, none of the results taken in
  EXPECT_TRUE(run.sink.ids.empty());
  EXPECT_FALSE(run.coordinator->finished());
  run.sink.taking = true;
  run.coordinator->serve();
  EXPECT_EQ(std::set<std::string>(run.sink.ids.begin(), run.sink.ids.end()), run.plans.ids);
  EXPECT_TRUE(run.coordinator->finished());
}

TEST(Coordinator, HandsOutEveryPointOnceUntilTheQueueIsEmptyAndSinksEachResult) {
  CoordinatedRun run;
  run.coordinator->start({});
  EXPECT_FALSE(run.coordinator->finished());
  const auto handed = run.play_ranks();

  std::multiset<std::string> all_handed;
  for (const auto& [rank, ids] : handed) all_handed.insert(ids.begin(), ids.end());
  const std::set<std::string>& planned = run.plans.ids;
  EXPECT_EQ(all_handed.size(), planned.size());
  EXPECT_EQ(std::set<std::string>(all_handed.begin(), all_handed.end()), planned);
  EXPECT_EQ(std::set<std::string>(run.sink.ids.begin(), run.sink.ids.end()), planned);
  EXPECT_EQ(run.sink.ids.size(), planned.size());
  for (const auto& protocol : run.sink.protocols) EXPECT_EQ(protocol.value("name", ""), "do_bench");
  EXPECT_TRUE(run.coordinator->finished());
  EXPECT_FALSE(run.coordinator->take_own());  // rank 0 asked for nothing, and holds nothing
}

TEST(Coordinator, GivesASetAsideRankNoWork) {
  CoordinatedRun run(/*exclude_slow=*/true);
  run.coordinator->start({2});
  const auto handed = run.play_ranks();

  EXPECT_FALSE(handed.contains(2));
  ASSERT_TRUE(handed.contains(1));
  EXPECT_EQ(handed.at(1).size(), run.plans.ids.size());
  EXPECT_TRUE(run.coordinator->finished());
}

TEST(Coordinator, RankZeroTakesItsOwnShareFromTheSameQueue) {
  CoordinatedRun run;
  run.coordinator->start({});
  run.coordinator->ask_for_own_work();
  std::set<std::string> own;
  while (auto assigned = run.coordinator->take_own()) {
    own.insert(assigned->point.id());
    RunRecord record;
    record.point_id = assigned->point.id();
    run.coordinator->record_own(std::move(record), nullptr, nullptr);
  }
  ASSERT_FALSE(own.empty());
  const auto handed = run.play_ranks();
  for (const auto& [rank, ids] : handed)
    for (const std::string& id : ids) EXPECT_FALSE(own.contains(id)) << id << " was handed to rank " << rank << " too";
}

TEST(Coordinator, ARankThatStopsInterruptsTheRunAndIsToldNoMore) {
  CoordinatedRun run;
  run.coordinator->start({});
  run.link.say_stopped(1, "SIGTERM");
  EXPECT_TRUE(run.coordinator->serve());
  EXPECT_EQ(run.coordinator->stopped_by(), "rank 1 on node-1 stopped (SIGTERM)");
  run.link.say_stopped(2, "rank 0 asked");
  run.coordinator->wind_down();
  EXPECT_EQ(run.link.stopped, std::set<int>{2});  // rank 1 had stopped already
}

// Rank 1 takes points until nothing is left while rank 2 still holds its first: rank 1 is told "no
// more work" only once rank 2's results are in (until then it stays in touch, and could take the
// points of a rank that stopped), and the run finishes then.
TEST(Coordinator, ARankWithNothingLeftHearsNoMoreWorkOnlyOnceEveryResultIsIn) {
  CoordinatedRun run;
  run.coordinator->start({});
  run.link.ask(2);
  run.coordinator->serve();
  ASSERT_EQ(run.link.answers[2].size(), 1u);
  const std::vector<Assigned> held_by_two = run.link.answers[2].back();
  ASSERT_FALSE(held_by_two.empty());
  std::size_t measured_by_one = 0;
  run.link.ask(1);
  for (int round = 0; round < 100; ++round) {
    run.coordinator->serve();
    auto& answers = run.link.answers[1];
    if (answers.empty()) break;  // asked, and not answered: nothing left for it yet
    const std::vector<Assigned> points = answers.back();
    answers.pop_back();
    ASSERT_FALSE(points.empty()) << "rank 1 was told there is no more work while rank 2 still measures";
    for (const Assigned& assigned : points) run.link.send_result(1, assigned.point);
    measured_by_one += points.size();
    run.link.ask(1);
  }
  EXPECT_EQ(measured_by_one + held_by_two.size(), run.plans.ids.size());
  EXPECT_FALSE(run.coordinator->finished());

  for (const Assigned& assigned : held_by_two) run.link.send_result(2, assigned.point);
  run.link.ask(2);
  run.coordinator->serve();
  ASSERT_EQ(run.link.answers[1].size(), 1u);
  EXPECT_TRUE(run.link.answers[1].back().empty());
  ASSERT_EQ(run.link.answers[2].size(), 2u);
  EXPECT_TRUE(run.link.answers[2].back().empty());
  EXPECT_TRUE(run.coordinator->finished());
}

}  // namespace
}  // namespace ks
