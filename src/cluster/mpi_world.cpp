#include "cluster/mpi_world.h"

#include <cstdlib>
#include <numeric>

namespace ks {
namespace {

std::vector<std::string> split(const std::vector<char>& bytes, const std::vector<int>& counts) {
  std::vector<std::string> out;
  std::size_t offset = 0;
  for (int count : counts) {
    out.emplace_back(bytes.data() + offset, static_cast<std::size_t>(count));
    offset += static_cast<std::size_t>(count);
  }
  return out;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

}  // namespace

MpiWorld::MpiWorld(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
  MPI_Comm_rank(node_, &local_rank_);
  MPI_Comm_size(node_, &local_size_);
}

MpiWorld::~MpiWorld() {
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
  MPI_Finalize();
}

std::vector<std::string> MpiWorld::gather_to_root(const std::string& mine) const {
  int length = static_cast<int>(mine.size());
  std::vector<int> counts(rank_ == 0 ? size_ : 0);
  MPI_Gather(&length, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs = rank_ == 0 ? displacements(counts) : std::vector<int>{};
  std::vector<char> bytes(rank_ == 0 ? std::accumulate(counts.begin(), counts.end(), std::size_t{0}) : 0);
  MPI_Gatherv(mine.data(), length, MPI_CHAR, bytes.data(), counts.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  return rank_ == 0 ? split(bytes, counts) : std::vector<std::string>{};
}

std::vector<std::string> MpiWorld::allgather_node(const std::string& mine) const {
  int length = static_cast<int>(mine.size());
  std::vector<int> counts(local_size_);
  MPI_Allgather(&length, 1, MPI_INT, counts.data(), 1, MPI_INT, node_);
  const std::vector<int> displs = displacements(counts);
  std::vector<char> bytes(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, bytes.data(), counts.data(), displs.data(), MPI_CHAR, node_);
  return split(bytes, counts);
}

std::string MpiWorld::broadcast_from_root(const std::string& root_value) const {
  int length = static_cast<int>(root_value.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string value = rank_ == 0 ? root_value : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Bcast(value.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return value;
}

bool MpiWorld::all(bool ok) const {
  int mine = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return every == 1;
}

void MpiWorld::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

void MpiWorld::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

std::string MpiWorld::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  if (const auto end = version.find_first_of(",\n"); end != std::string::npos) version.resize(end);
  return version;
}

}  // namespace ks
