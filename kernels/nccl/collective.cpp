#include "kernels/nccl/collective.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/bf16.h"
#include "kernels/common/fp16.h"

namespace ks::collective {
namespace {

constexpr std::array<const char*, 5> kOpNames{"sum", "prod", "max", "min", "avg"};
constexpr std::array<const char*, 8> kTypeNames{"fp32", "fp64", "fp16", "bf16", "int32", "int64", "int8", "uint8"};

std::map<std::string, CollectiveSpec>& collectives() {
  static std::map<std::string, CollectiveSpec> specs;
  return specs;
}

// The enumerator whose name is `name` in `names` (in the enumeration's order); throws
// std::invalid_argument, `unknown` followed by the name, for any other.
template <class Enum, std::size_t N>
Enum named(const std::array<const char*, N>& names, const std::string& name, const char* unknown) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Enum>(i);
  throw std::invalid_argument(unknown + name);
}

// What each data type is, in DataType's order: its size, the largest integer it holds exactly (a sum
// beyond it is rounded or wraps), the rounding a sum of it is allowed, and whether it is an integer.
struct TypeFacts {
  std::size_t size;
  double exact_limit, relative_epsilon;
  bool integer;
};
constexpr std::array<TypeFacts, 8> kTypeFacts{{
    {4, 1e15, 1e-6, false},        // fp32
    {8, 1e15, 1e-12, false},       // fp64
    {2, 2048, 1.0 / 1024, false},  // fp16
    {2, 256, 1.0 / 128, false},    // bf16
    {4, 1e15, 1e-12, true},        // int32
    {8, 1e15, 1e-12, true},        // int64
    {1, 127, 1e-12, true},         // int8
    {1, 255, 1e-12, true},         // uint8
}};
const TypeFacts& facts(DataType type) { return kTypeFacts[static_cast<std::size_t>(type)]; }

// Integers wrap as the type does; floats keep their value.
double wrapped(double value, DataType type) {
  if (type == DataType::int8)
    return static_cast<double>(static_cast<std::int8_t>(static_cast<std::int64_t>(value) & 0xFF));
  if (type == DataType::uint8) return static_cast<double>(static_cast<std::int64_t>(value) & 0xFF);
  return value;
}

// 16-bit floats through MPI: a user op that widens each element to float, combines and rounds back.
float load16(const void* from, DataType type) {
  std::uint16_t bits;
  std::memcpy(&bits, from, sizeof bits);
  return type == DataType::bf16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

void store16(void* to, DataType type, float value) {
  const std::uint16_t bits = type == DataType::bf16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
  std::memcpy(to, &bits, sizeof bits);
}

float combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::prod: return a * b;
    case ReduceOp::max: return std::fmax(a, b);
    case ReduceOp::min: return std::fmin(a, b);
    default: return a + b;  // sum, and avg (divided after)
  }
}

template <DataType Type, ReduceOp Op> void reduce16(void* in, void* inout, int* length, MPI_Datatype*) {
  auto* a = static_cast<unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (int i = 0; i < *length; ++i)
    store16(b + 2 * i, Type, combine(Op, load16(a + 2 * i, Type), load16(b + 2 * i, Type)));
}

template <DataType Type> MPI_Op op16(ReduceOp op) {
  static const std::array<MPI_Op, 4> ops = [] {
    std::array<MPI_Op, 4> made{};
    MPI_Op_create(&reduce16<Type, ReduceOp::sum>, 1, &made[0]);
    MPI_Op_create(&reduce16<Type, ReduceOp::prod>, 1, &made[1]);
    MPI_Op_create(&reduce16<Type, ReduceOp::max>, 1, &made[2]);
    MPI_Op_create(&reduce16<Type, ReduceOp::min>, 1, &made[3]);
    return made;
  }();
  return ops[op == ReduceOp::avg ? 0 : static_cast<std::size_t>(op)];
}

// An element of a typed buffer, as a double.
double read_element(const void* buffer, std::size_t index, DataType type) {
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  switch (type) {
    case DataType::fp32: return reinterpret_cast<const float*>(bytes)[index];
    case DataType::fp64: return reinterpret_cast<const double*>(bytes)[index];
    case DataType::fp16:
    case DataType::bf16: return load16(bytes + 2 * index, type);
    case DataType::int32: return reinterpret_cast<const std::int32_t*>(bytes)[index];
    case DataType::int64: return static_cast<double>(reinterpret_cast<const std::int64_t*>(bytes)[index]);
    case DataType::int8: return reinterpret_cast<const std::int8_t*>(bytes)[index];
    case DataType::uint8: return bytes[index];
  }
  return 0;
}

}  // namespace

ReduceOp reduce_op_from(const std::string& name) { return named<ReduceOp>(kOpNames, name, "op: unknown reduction "); }

DataType data_type_from(const std::string& name) {
  return named<DataType>(kTypeNames, name, "dtype: unknown data type ");
}

std::size_t size_of(DataType type) { return facts(type).size; }

std::size_t aligned_share(std::size_t elements, std::size_t element_size, int members) {
  return (elements / static_cast<std::size_t>(members)) & ~(16 / element_size - 1);
}

CollectiveRegistrar::CollectiveRegistrar(const char* name, CollectiveSpec spec) {
  spec.name = name;
  collectives().emplace(name, std::move(spec));
}

const CollectiveSpec* find_collective(const std::string& kernel) {
  const auto it = collectives().find(kernel);
  return it == collectives().end() ? nullptr : &it->second;
}

Transport transport_of(const std::string& implementation) {
  if (implementation == "nccl") return Transport::nccl;
  if (implementation == "nccl_graph") return Transport::nccl_graph;
  return Transport::mpi;
}

void measured_by_gangs(const std::string& kernel, const std::string& implementation) {
  throw std::runtime_error(kernel + " " + implementation +
                           " is a collective: the ranks of its gang measure it, not a worker");
}

void declare_collective(KernelDeclaration& kernel, const std::string& name) {
  // Registered just before, by the same file (KS_COLLECTIVE_KERNEL): a file's static objects
  // initialise in the order they are defined.
  const CollectiveSpec* spec = find_collective(name);
  kernel
      .integer("bytes", 32 << 20,
               "message size in bytes, as nccl-tests' -b/-e (what each collective makes of it: "
               "docs/collectives.md)")
      .min(1);
  kernel.choice("dtype", "fp32", {kTypeNames.begin(), kTypeNames.end()}, "element type");
  if (spec->reduces) kernel.choice("op", "sum", {kOpNames.begin(), kOpNames.end()}, "reduction");
  if (spec->rooted) kernel.integer("root", 0, "the gang member the data comes from").min(0);
  kernel.boolean("in_place", false, "the result overwrites the input, as nccl-tests' in-place column");
  kernel.integer("group_size", 2, "ranks taking part (a gang)").min(1);
  kernel.choice("placement", "spread", {"same-node", "spread"},
                "how the gang's ranks are chosen: all on one node, or over as many nodes as there are");
  kernel.modes({"run"});
  kernel.work([spec](const Parameters& p, const std::string&) {
    const int members = p.get<int>("group_size");
    return Work{0, spec->algorithm_bytes(counts_of(*spec, p, members),
                                         size_of(data_type_from(p.get<std::string>("dtype"))), members)};
  });
  kernel.validate([spec](const Parameters& p) -> std::optional<std::string> {
    const int members = p.get<int>("group_size");
    if (spec->rooted && p.get<int>("root") >= members)
      return fmt::format("root: {} is not a member of a gang of {} (members 0 to {})", p.get<int>("root"), members,
                         members - 1);
    if (counts_of(*spec, p, members).param == 0)
      return fmt::format("bytes: {} bytes of {} make no element for a member of a gang of {}",
                         p.get<std::uint64_t>("bytes"), p.get<std::string>("dtype"), members);
    return std::nullopt;
  });
}

double input_value(std::size_t index, int member, const Setting& s) {
  const std::size_t m = static_cast<std::size_t>(member);
  if (!s.reduction) return static_cast<double>((m * 31 + index * 7) % 61);
  if (s.op == ReduceOp::prod) return index % static_cast<std::size_t>(s.members) == m ? 2 : 1;
  return static_cast<double>((m + index) % 4);
}

std::size_t input_period(const Setting& s) {
  if (!s.reduction) return 61;
  if (s.op == ReduceOp::prod) return static_cast<std::size_t>(s.members);
  return 4;
}

Counts counts_of(const CollectiveSpec& spec, const Parameters& params, int members) {
  const std::size_t size = size_of(data_type_from(params.get<std::string>("dtype")));
  return spec.counts(params.get<std::uint64_t>("bytes") / size, size, members);
}

Setting setting_of(const CollectiveSpec& spec, const Parameters& params, int members, int me) {
  return {.members = members,
          .me = me,
          .root = spec.rooted ? params.get<int>("root") : 0,
          .op = spec.reduces ? reduce_op_from(params.get<std::string>("op")) : ReduceOp::sum,
          .type = data_type_from(params.get<std::string>("dtype")),
          .in_place = params.get<bool>("in_place"),
          .reduction = spec.reduces};
}

double reduced_input(std::size_t index, const Setting& s) {
  double out = input_value(index, 0, s);
  for (int member = 1; member < s.members; ++member) {
    const double value = input_value(index, member, s);
    switch (s.op) {
      case ReduceOp::prod: out *= value; break;
      case ReduceOp::max: out = std::max(out, value); break;
      case ReduceOp::min: out = std::min(out, value); break;
      default: out += value;
    }
  }
  if (s.op == ReduceOp::avg) out = facts(s.type).integer ? std::trunc(out / s.members) : out / s.members;
  return wrapped(out, s.type);
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::fp32: return MPI_FLOAT;
    case DataType::fp64: return MPI_DOUBLE;
    case DataType::fp16:
    case DataType::bf16: return MPI_UINT16_T;
    case DataType::int32: return MPI_INT32_T;
    case DataType::int64: return MPI_INT64_T;
    case DataType::int8: return MPI_INT8_T;
    case DataType::uint8: return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op, DataType type) {
  if (type == DataType::bf16) return op16<DataType::bf16>(op);
  if (type == DataType::fp16) return op16<DataType::fp16>(op);
  switch (op) {
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
    default: return MPI_SUM;
  }
}

void write_element(void* buffer, std::size_t index, DataType type, double value) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  switch (type) {
    case DataType::fp32: reinterpret_cast<float*>(bytes)[index] = static_cast<float>(value); break;
    case DataType::fp64: reinterpret_cast<double*>(bytes)[index] = value; break;
    case DataType::fp16:
    case DataType::bf16: store16(bytes + 2 * index, type, static_cast<float>(value)); break;
    case DataType::int32: reinterpret_cast<std::int32_t*>(bytes)[index] = static_cast<std::int32_t>(value); break;
    case DataType::int64: reinterpret_cast<std::int64_t*>(bytes)[index] = static_cast<std::int64_t>(value); break;
    case DataType::int8:
      reinterpret_cast<std::int8_t*>(bytes)[index] = static_cast<std::int8_t>(wrapped(value, type));
      break;
    case DataType::uint8: bytes[index] = static_cast<std::uint8_t>(wrapped(value, type)); break;
  }
}

void divide_elements(void* buffer, std::size_t count, DataType type, int members) {
  for (std::size_t i = 0; i < count; ++i) {
    const double sum = read_element(buffer, i, type);
    write_element(buffer, i, type, facts(type).integer ? std::trunc(sum / members) : sum / members);
  }
}

std::int64_t count_wrong_elements(const CollectiveSpec& spec, const Counts& counts, const Setting& s,
                                  const void* received, std::string& first) {
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < counts.recv; ++i) {
    const double got = read_element(received, i, s.type);
    const double expected = spec.expected(i, counts, s);
    if (std::fabs(got - expected) <= tolerance(expected, s)) continue;  // NaN is wrong too
    if (wrong++ == 0) first = fmt::format("element {} holds {:g}, expected {:g}", i, got, expected);
  }
  return wrong;
}

double tolerance(double expected, const Setting& s) {
  const bool sums = s.reduction && (s.op == ReduceOp::sum || s.op == ReduceOp::avg);
  const bool exact = !sums || (s.op == ReduceOp::sum && 3.0 * s.members <= facts(s.type).exact_limit);
  if (exact) return 0;
  if (facts(s.type).integer) return 1;
  return facts(s.type).relative_epsilon * (std::fabs(expected) * s.members + 1);
}

}  // namespace ks::collective
