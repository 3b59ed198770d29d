#include "cluster/gang_communicators.h"

#include <utility>

#include "common/bytes.h"

namespace ks {
namespace {

constexpr int kCreateTag = 4242;  // a rank is in one gang at a time: one tag serves every creation

}  // namespace

GangCommunicators::~GangCommunicators() {
  for (auto& [members, held] : held_)
    if (held.comm != MPI_COMM_NULL && !held.lost) MPI_Comm_free(&held.comm);
  if (parent_ != MPI_COMM_NULL) MPI_Comm_free(&parent_);
}

MPI_Comm GangCommunicators::of(const std::vector<int>& members, std::uint32_t generation) {
  const auto found = held_.find(members);
  if (found != held_.end() && found->second.generation == generation)
    return found->second.lost ? MPI_COMM_NULL : found->second.comm;
  // A communicator of an earlier generation is left as it is: another member lost it, and may have
  // left operations on it unfinished.
  MPI_Group world, gang;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &gang);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_create_group(parent_, gang, kCreateTag, &comm);
  MPI_Group_free(&gang);
  MPI_Group_free(&world);
  held_[members] = Held{comm, generation, false};
  return comm;
}

void GangCommunicators::abandon(const std::vector<int>& members, std::vector<std::shared_ptr<void>> in_flight) {
  held_[members].lost = true;
  lost_since_taken_.push_back(members);
  // Never freed: MPI may still write it (a leak of one point's buffers per timeout, by design).
  static auto* abandoned = new std::vector<std::shared_ptr<void>>();
  abandoned->insert(abandoned->end(), std::make_move_iterator(in_flight.begin()),
                    std::make_move_iterator(in_flight.end()));
}

std::vector<std::vector<int>> GangCommunicators::take_lost() { return std::exchange(lost_since_taken_, {}); }

std::string encode_member_sets(const std::vector<std::vector<int>>& sets) {
  std::string out;
  append_value(out, static_cast<std::uint64_t>(sets.size()));
  for (const auto& members : sets) append_values(out, members);
  return out;
}

std::vector<std::vector<int>> decode_member_sets(std::string_view bytes) {
  std::vector<std::vector<int>> sets;
  if (bytes.empty()) return sets;
  std::size_t offset = 0;
  const auto count = value_at<std::uint64_t>(bytes, offset);
  need_bytes(bytes, offset, count);  // a set takes more than a byte: a count beyond the bytes is refused
  for (std::uint64_t i = 0; i < count; ++i) sets.push_back(values_at<int>(bytes, offset));
  return sets;
}

}  // namespace ks
