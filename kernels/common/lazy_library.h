#pragma once
// Functions of a shared library that is opened at the first call of one of them, not when the
// program starts. cuBLASLt's static initialisers take about 60 ms and 150 MB in every process that
// links it: a kernelsweep process that never runs a cuBLAS point (a command such as `status`, a rank,
// a worker of CPU points) should not pay that.
//
//   KS_LAZY_FUNCTION(ks::kCublasLtLibrary, cublasLtMatmul);
//
// declares, in the namespace where it stands, a constant `cublasLtMatmul`: a pointer to a function of
// the same signature as the library's (from its header) that looks the library's function up on its
// first call and calls it. Unqualified calls from inside that namespace find it before the global
// declaration, so code written against the library's header calls through it unchanged; a call that
// names the global function (::cublasLtMatmul) fails to link, since the library is not linked.
#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace ks::lazy_library {

// The library's handle, opened once (dlopen finds it as the linker would: the program's RUNPATH,
// LD_LIBRARY_PATH, the system's folders); throws naming the library and the loader's reason.
inline void* open(const char* library) {
  void* handle = ::dlopen(library, RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw std::runtime_error(std::string("cannot load ") + library + ": " + (why ? why : "unknown reason"));
  }
  return handle;
}

inline void* find(const char* library, const char* symbol) {
  void* function = ::dlsym(open(library), symbol);
  if (!function) throw std::runtime_error(std::string(library) + " has no function " + symbol);
  return function;
}

template <const char* Library, const char* Symbol, class Pointer> struct Function;

template <const char* Library, const char* Symbol, class Result, class... Args>
struct Function<Library, Symbol, Result (*)(Args...)> {
  static Result call(Args... args) {
    // Looked up once: calls inside timed loops (cublasLtMatmul) cost one guard check more.
    static const auto found = reinterpret_cast<Result (*)(Args...)>(find(Library, Symbol));
    return found(args...);
  }
};

}  // namespace ks::lazy_library

#define KS_LAZY_FUNCTION(library, function) KS_LAZY_FUNCTION_NAMED(library, function, decltype(&::function))
// For a function that its header overloads: POINTER is the type of the library's own one.
#define KS_LAZY_OVERLOAD(library, function, pointer) KS_LAZY_FUNCTION_NAMED(library, function, pointer)
// A second step, so that a function that its header renames by a macro (cublasCreate is
// cublasCreate_v2) is declared, and looked up, under the name the macro gives it.
#define KS_LAZY_FUNCTION_NAMED(library, function, pointer)    \
  inline constexpr char function##_symbol_name[] = #function; \
  inline constexpr auto function = &::ks::lazy_library::Function<library, function##_symbol_name, pointer>::call
