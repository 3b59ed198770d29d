#include "cluster/mpi_world.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "cluster/rank_messages.h"

namespace ks {

// Every collective step is started non-blocking and waited for with a deadline: a rank that stops
// (or never arrives) would otherwise hold every other rank inside MPI for good. A rank that finished
// its share waits here for the others' last points, however long they take: it looks ever less often
// (PollInterval, rank_messages.h), leaving the cores it may share to the workers still measuring.
void MpiWorld::wait(MPI_Request& request, const char* step) const {
  const auto deadline = std::chrono::steady_clock::now() + collective_deadline_;
  PollInterval interval(std::chrono::microseconds(100), std::chrono::microseconds(5000));
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline) {
      // Collective steps come before the sweep loop or after the file is finished: nothing is lost.
      std::fprintf(stderr,
                   "kernelsweep: rank %d: the ranks did not all reach %s within %lld s (a rank stopped, or was "
                   "lost); ending the job\n",
                   rank_, step, static_cast<long long>(collective_deadline_.count()));
      abort(1);
    }
    std::this_thread::sleep_for(interval.next());
    interval.after_look(false);
  }
}

// MPI_Comm_split_type has no non-blocking form; like MPI_Init before it, it waits for every rank.
MpiWorld::MpiWorld(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
  MPI_Comm_rank(node_, &local_rank_);
  MPI_Comm_size(node_, &local_size_);
}

// MPI_Finalize waits for every rank without a deadline: a rank stopped after the last collective step
// would hold the others there for good. They meet first at a barrier that has one.
MpiWorld::~MpiWorld() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  wait(request, "the end of the run");
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
  MPI_Finalize();
}

std::vector<std::string> MpiWorld::gather_to_root(const std::string& mine) const {
  return gather(mine, MPI_COMM_WORLD, rank_ == 0 ? size_ : 0, true, "a gather");
}

std::vector<std::string> MpiWorld::allgather_node(const std::string& mine) const {
  return gather(mine, node_, local_size_, false, "a gather on the node");
}

// Their lengths first, then their bytes.
std::vector<std::string> MpiWorld::gather(const std::string& mine, MPI_Comm comm, int received, bool to_root,
                                          const char* step) const {
  int length = static_cast<int>(mine.size());
  std::vector<int> counts(received), offsets(received);
  MPI_Request request;
  if (to_root) MPI_Igather(&length, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm, &request);
  else MPI_Iallgather(&length, 1, MPI_INT, counts.data(), 1, MPI_INT, comm, &request);
  wait(request, step);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  std::vector<char> bytes(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
  if (to_root)
    MPI_Igatherv(mine.data(), length, MPI_CHAR, bytes.data(), counts.data(), offsets.data(), MPI_CHAR, 0, comm,
                 &request);
  else
    MPI_Iallgatherv(mine.data(), length, MPI_CHAR, bytes.data(), counts.data(), offsets.data(), MPI_CHAR, comm,
                    &request);
  wait(request, step);
  std::vector<std::string> strings;
  for (int i = 0; i < received; ++i) strings.emplace_back(bytes.data() + offsets[i], counts[i]);
  return strings;
}

std::string MpiWorld::broadcast_from_root(const std::string& root_value) const {
  int length = static_cast<int>(root_value.size());
  MPI_Request request;
  MPI_Ibcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  wait(request, "a broadcast");
  std::string value = rank_ == 0 ? root_value : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Ibcast(value.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD, &request);
  wait(request, "a broadcast");
  return value;
}

bool MpiWorld::all(bool ok) const {
  int mine = ok ? 1 : 0, every = 0;
  MPI_Request request;
  MPI_Iallreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
  wait(request, "an agreement");
  return every == 1;
}

MPI_Comm MpiWorld::duplicate_world(const char* step) const {
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Request request;
  MPI_Comm_idup(MPI_COMM_WORLD, &copy, &request);
  wait(request, step);
  return copy;
}

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
