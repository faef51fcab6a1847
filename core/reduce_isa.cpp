// Picks the reduction kernels once per process: the best ISA the CPU runs, or the one that
// TIERCC_REDUCE_ISA names. The pick lives in an atomic pointer so that the hot path is one load.
#include "core/reduce_isa.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <atomic>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"

namespace tiercc {
namespace {

using kernels::ReduceKernels;

constexpr const char* kParam = "TIERCC_REDUCE_ISA";

struct Isa {
  const char* name;
  const char* needs;  // the CPU features, as the error message names them
  bool (*supported)();
  const ReduceKernels& (*table)();
};

#if defined(__x86_64__)
// F16C through cpuid: clang 14's __builtin_cpu_supports does not know "f16c". It needs no OS
// support of its own beyond the AVX state, which the avx2/avx512 checks below include.
bool cpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

// libgcc's (and compiler-rt's) feature bits include the OS check (XCR0): a CPU with AVX-512
// under a kernel that does not save zmm state reports no AVX-512.
bool cpuHasAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && cpuHasF16c();
}

bool cpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && cpuHasF16c();
}
#endif

bool always() { return true; }

// Best first: "auto" takes the first one the CPU supports.
const Isa kIsas[] = {
#if defined(__x86_64__)
    {"avx512", "avx512f, avx512bw, avx512dq, avx512vl and f16c", cpuHasAvx512, kernels::avx512Kernels},
    {"avx2", "avx2 and f16c", cpuHasAvx2, kernels::avx2Kernels},
#endif
    {"generic", "nothing", always, kernels::genericKernels},
};

const Isa* findIsa(const std::string& name) {
  for (const Isa& isa : kIsas)
    if (name == isa.name) return &isa;
  return nullptr;
}

std::string supportedList() {
  std::string out;
  for (const Isa& isa : kIsas) {
    if (!isa.supported()) continue;
    out += out.empty() ? "" : ", ";
    out += isa.name;
  }
  return out;
}

// `what` names where the request came from, for the error message.
const ReduceKernels& kernelsFor(const std::string& name, const std::string& what) {
  if (name == "auto" || name.empty()) {
    for (const Isa& isa : kIsas)
      if (isa.supported()) return isa.table();
  }
  const Isa* isa = findIsa(name);
  if (!isa) {
    std::string known = "auto";
    for (const Isa& i : kIsas) known += std::string(", ") + i.name;
    fail(ErrorCode::InvalidArgument, what, "='", name, "' is not a reduction ISA of this build (use one of: ", known,
         ")");
  }
  if (!isa->supported())
    fail(ErrorCode::InvalidArgument, what, "='", name, "': the ", name, " kernels need ", isa->needs,
         ", which this CPU does not have; it can run: ", supportedList());
  return isa->table();
}

const ReduceKernels* chooseAtFirstUse() {
  const std::string requested = params::getString(kParam);
  const ReduceKernels& chosen = kernelsFor(requested, kParam);
  TIERCC_LOG(Info, Init) << "reduction kernels: " << chosen.isa << " (" << kParam << "=" << requested
                         << "; this CPU runs: " << supportedList() << ")";
  return &chosen;
}

// A static local, so the first use initialises it exactly once even when several threads race;
// if the parameter is invalid the initialisation throws and the next call tries (and throws) again.
std::atomic<const ReduceKernels*>& activeSlot() {
  static std::atomic<const ReduceKernels*> slot{chooseAtFirstUse()};
  return slot;
}

}  // namespace

const ReduceKernels& activeReduceKernels() { return *activeSlot().load(std::memory_order_acquire); }

const char* reduceIsaName() { return activeReduceKernels().isa; }

std::vector<std::string> reduceIsaNames() {
  std::vector<std::string> names;
  for (const Isa& isa : kIsas) names.emplace_back(isa.name);
  return names;
}

bool reduceIsaSupported(const std::string& name) {
  const Isa* isa = findIsa(name);
  return isa && isa->supported();
}

void setReduceIsaForTesting(const std::string& name) {
  const ReduceKernels& chosen = kernelsFor(name, "setReduceIsaForTesting");
  activeSlot().store(&chosen, std::memory_order_release);
}

}  // namespace tiercc
