#pragma once
// Collectives over gangs of ranks, defined as nccl-tests defines them (its doc/PERFORMANCE.md and
// src/*.cu): the element counts of each member's buffers for a message of `bytes`, the algorithm
// bandwidth's bytes, the bus bandwidth's factor, the values a check expects, and the call itself.
// One file per collective (all_reduce.cpp, all_gather.cpp, ...) fills a CollectiveSpec, and registers
// it and declares its kernel with KS_COLLECTIVE_KERNEL (collective_kernel.h): adding a collective
// touches one file.
//
// A collective point is measured by every rank of its gang at once (cluster/gang.h). The cpu
// implementation `mpi` runs through MPI on the gang's communicator, in the ranks; the cuda ones,
// `nccl` and `nccl_graph`, through NCCL in each member's worker, on its GPU (cluster/nccl_member.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include <mpi.h>

#include "kernels/kernel.h"

namespace ks::collective {

enum class ReduceOp { sum, prod, max, min, avg };
ReduceOp reduce_op_from(const std::string& name);  // throws std::invalid_argument

enum class DataType { fp32, fp64, fp16, bf16, int32, int64, int8, uint8 };
DataType data_type_from(const std::string& name);  // throws std::invalid_argument
std::size_t size_of(DataType type);

// Elements of one member's buffers, as nccl-tests' GetCollByteCount gives them for `elements` =
// bytes / element size. In place, the send buffer starts `send_in_place_offset` × member elements
// into the receive buffer, and the result `recv_in_place_offset` × member elements into it.
struct Counts {
  std::size_t send = 0, recv = 0;
  std::size_t param = 0;  // the count the call takes
  std::size_t send_in_place_offset = 0, recv_in_place_offset = 0;
};

// nccl-tests rounds a member's share down to a multiple of 16 bytes: (elements / members) & ~(16 / size - 1).
std::size_t aligned_share(std::size_t elements, std::size_t element_size, int members);

// What a member is in its gang, and what the point asks of the collective.
struct Setting {
  int members = 1;
  int me = 0;
  int root = 0;
  ReduceOp op = ReduceOp::sum;
  DataType type = DataType::fp32;
  bool in_place = false;
  bool reduction = false;  // the collective reduces (its spec's `reduces`)
};

// One call of a collective through a library (MPI, NCCL): `send` the input, `recv` the buffer the
// result lands in, and the library's data type, reduction op and communicator.
template <class Type, class Op, class Comm> struct CollectiveCall {
  const void* send = nullptr;
  void* recv = nullptr;
  Counts counts;
  Type type{};
  Op op{};
  int root = 0;
  Comm comm{};
};

// One call through MPI: `send` is null in place (MPI_IN_PLACE). MPI puts every result at the start of
// the receive buffer, in place too (where NCCL leaves reduce_scatter's block at recv_in_place_offset).
struct MpiCall : CollectiveCall<MPI_Datatype, MPI_Op, MPI_Comm> {
  const void* send_or_in_place() const { return send ? send : MPI_IN_PLACE; }
  int count() const { return static_cast<int>(counts.param); }  // the count the MPI call takes
};

struct NcclCall;  // kernels/nccl/nccl_call.h, where NCCL is built in

// How a collective's implementation moves the data: by its name.
enum class Transport { mpi, nccl, nccl_graph };
Transport transport_of(const std::string& implementation);

struct CollectiveSpec {
  std::string name{};           // its kernel's, set when it is registered
  bool reduces = false;         // takes an op
  bool rooted = false;          // takes a root
  bool mpi_one_buffer = false;  // its MPI call has one buffer (MPI_Bcast): the root's input is in it
  Counts (*counts)(std::size_t elements, std::size_t element_size, int members) = nullptr;
  // nccl-tests' GetBw: the bytes the algorithm bandwidth divides by the time, and the bus
  // bandwidth's factor over it.
  double (*algorithm_bytes)(const Counts& counts, std::size_t element_size, int members) = nullptr;
  double (*bus_factor)(int members) = nullptr;
  // The value receive element `index` of member s.me holds after the call, from every member's input
  // (input_value): what a check compares with.
  double (*expected)(std::size_t index, const Counts& counts, const Setting& s) = nullptr;
  // Starts the call (a non-blocking MPI collective), so that a member that stops cannot hold the
  // others past the point's timeout.
  void (*start_mpi)(const MpiCall& call, MPI_Request* request) = nullptr;
  // Enqueues the call on the call's stream through NCCL; returns its ncclResult_t. Null where
  // kernelsweep is built without NCCL.
  int (*start_nccl)(const NcclCall& call) = nullptr;
};

// The setting of member `me` of `members` for a point's parameters (dtype, in_place, op, root).
Setting setting_of(const CollectiveSpec& spec, const Parameters& params, int members, int me);

// The counts of a point's collective for a gang of `members` (its bytes and dtype).
Counts counts_of(const CollectiveSpec& spec, const Parameters& params, int members);

// Registers a collective's spec under its kernel's name (from a static object in its file); finds one
// by kernel name (null: not a collective).
struct CollectiveRegistrar {
  CollectiveRegistrar(const char* name, CollectiveSpec spec);
};
const CollectiveSpec* find_collective(const std::string& kernel);

// The instance factory of a collective's implementations: the ranks of its gang measure it
// (cluster/gang.h), so a worker asked for one says so.
[[noreturn]] void measured_by_gangs(const std::string& kernel, const std::string& implementation);

// The parameters every collective kernel takes (bytes, dtype, group_size, placement, in_place, and op
// or root where the collective has them), its one mode, its work (the algorithm bandwidth's bytes)
// and its constraints, for the registered collective `name`.
void declare_collective(KernelDeclaration& kernel, const std::string& name);

// The input element `index` of member `member`: small integers, exact in every data type, so that a
// reduction's result is exact whatever order it adds in (gangs of up to 42 ranks in int8, 85 in
// bf16: beyond, the check allows for rounding). prod multiplies ones and one two per element.
double input_value(std::size_t index, int member, const Setting& s);
// The inputs repeat every input_period elements (what lets a large input be written as copies of a
// small one).
std::size_t input_period(const Setting& s);
// The reduction of every member's input at `index`, as op gives it (avg: the sum over the members).
double reduced_input(std::size_t index, const Setting& s);

// The counts of the collectives whose every buffer holds the whole message (all_reduce, broadcast).
inline Counts whole_message(std::size_t elements, std::size_t, int) { return {elements, elements, elements, 0, 0}; }

// nccl-tests' algorithm bytes: the count's (all_reduce, broadcast), or the members' counts' together.
inline double count_bytes(const Counts& c, std::size_t size, int) { return static_cast<double>(c.param * size); }
inline double members_count_bytes(const Counts& c, std::size_t size, int members) {
  return static_cast<double>(c.param * size) * members;
}

// The bus bandwidth's factors of nccl-tests.
inline double all_to_all_factor(int members) { return static_cast<double>(members - 1) / members; }

// The MPI datatype of a data type (fp16 and bf16 as 16-bit words), and the MPI op for `op` on it
// (user ops for fp16 and bf16, sum for avg, which the caller divides after).
MPI_Datatype mpi_type(DataType type);
MPI_Op mpi_op(ReduceOp op, DataType type);

// An element of a typed buffer written from a double.
void write_element(void* buffer, std::size_t index, DataType type, double value);
// avg through MPI: the sum divided by the members, in the data type.
void divide_elements(void* buffer, std::size_t count, DataType type, int members);
// The elements of a member's receive buffer (`received`, counts.recv of them) that differ from what
// spec.expected says, and the first of them in words (nccl-tests' #wrong).
std::int64_t count_wrong_elements(const CollectiveSpec& spec, const Counts& counts, const Setting& s,
                                  const void* received, std::string& first);
// How far a received element may be from its expected value: 0 but for avg, and for sums too large
// to be exact in the type.
double tolerance(double expected, const Setting& s);

}  // namespace ks::collective
