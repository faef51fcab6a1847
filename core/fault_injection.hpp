// Faults a test can inject (TIERCC_FAULT): kill, stop, stall or fail one rank at a given step of
// a given collective. Compiled in, inert unless the variable names this rank: the executor then
// carries a pointer to it and asks at each step (one null test a step otherwise).
//
//   TIERCC_FAULT=ACTION:rank=R[:call=N][:step=S][:ms=M]
//     kill   the process gets SIGKILL (a crash, a lost host)
//     stop   the process gets SIGSTOP (a hung host: its heartbeat stops too)
//     stall  the calling thread sleeps M ms (default 10000), the rest of the process runs on
//            (a slow or stuck rank: its peers' deadlines name it)
//     error  the step throws TransportError (a broken NIC or link)
//   at step S (default 0) of the plan of collective #N (default 0; the number error messages
//   show, "allreduce #N"), or at the call's end when its plan has fewer steps. A fault fires once
//   per process, so the communicator a shrink makes does not fire it again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tiercc {

struct FaultInjection {
  enum class Action { Kill, Stop, Stall, Error };
  Action action = Action::Kill;
  int rank = 0;
  std::uint64_t call = 0;
  std::size_t step = 0;
  std::chrono::milliseconds stall{10000};
  std::string spec;  ///< the text it was parsed from, for messages

  /// Parses TIERCC_FAULT's syntax; InvalidArgument saying what was wrong. Empty text: nullopt.
  static std::optional<FaultInjection> parse(const std::string& text);

  /// The executor is at step `at` of call `seq` (`what`: "allreduce #3"): fires if it is this
  /// fault's step, or at the end (`atEnd`) of this fault's call that never reached its step.
  void reached(std::uint64_t seq, std::size_t at, bool atEnd, const std::string& what) const;
};

}  // namespace tiercc
