#pragma once
// What the file of one collective (all_reduce.cpp, ...) includes: the spec it fills (collective.h),
// NcclCall where kernelsweep is built with NCCL, and the macros that keep the file to what is its
// own.
#include "kernels/nccl/collective.h"

// A CollectiveSpec's start_nccl: CALL, an NCCL call on the NcclCall `c`; null where kernelsweep is
// built without NCCL (CALL is not compiled then).
#ifdef KERNELSWEEP_HAVE_NCCL
#include "kernels/nccl/nccl_call.h"
#define KS_START_NCCL(CALL) .start_nccl = [](const ::ks::collective::NcclCall& c) -> int { return CALL; }
#else
#define KS_START_NCCL(CALL) .start_nccl = nullptr
#endif

// Registers collective NAME's spec (NAME_spec, in ks::collective, in the same file) and declares its
// kernel and its three implementations, all measured by the ranks of a gang; MPI_CALL and NCCL_CALL
// name the calls they make, in their help.
#define KS_COLLECTIVE_KERNEL(NAME, TITLE, MPI_CALL, NCCL_CALL, DESCRIPTION)                                         \
  static const ::ks::collective::CollectiveRegistrar ks_collective_registrar_##NAME{#NAME,                          \
                                                                                    ::ks::collective::NAME##_spec}; \
  KS_KERNEL(NAME, TITLE, DESCRIPTION) { ::ks::collective::declare_collective(kernel, #NAME); }                      \
  KS_IMPLEMENTATION(NAME, mpi, cpu, MPI_CALL " on the gang's communicator") {                                       \
    ::ks::collective::measured_by_gangs(#NAME, "mpi");                                                              \
  }                                                                                                                 \
  KS_IMPLEMENTATION(NAME, nccl, cuda, NCCL_CALL " on the gang's NCCL communicator, one GPU per member") {           \
    ::ks::collective::measured_by_gangs(#NAME, "nccl");                                                             \
  }                                                                                                                 \
  KS_IMPLEMENTATION(NAME, nccl_graph, cuda, NCCL_CALL " captured once in a CUDA graph, launched per call") {        \
    ::ks::collective::measured_by_gangs(#NAME, "nccl_graph");                                                       \
  }                                                                                                                 \
  static_assert(true, "a collective kernel's declaration ends with a semicolon")
