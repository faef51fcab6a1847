// tiercc-info: what tiercc detects. Under a launcher (tiercc-run, mpirun, torchrun) every rank
// reports its place in the topology and rank 0 adds the summary; alone, it reports this
// machine. Then devices (ibverbs GIDs, UCX transports, CUDA) and every TIERCC_* parameter.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "plan/selector.hpp"
#include "runtime/env.hpp"
#include "core/params.hpp"
#include "core/reduce_isa.hpp"
#include "tiercc/tiercc.hpp"
#include "tools/info/probes.hpp"
#include "transport/factory.hpp"

namespace {

void printParams(std::ostream& out) {
  out << "parameters:\n";
  int width = 0;
  for (const auto& p : tiercc::params::all()) width = std::max(width, static_cast<int>(std::strlen(p.name)));
  for (const auto& p : tiercc::params::all()) {
    std::string value = tiercc::params::raw(p.name);
    out << "  " << std::left << std::setw(width) << p.name << " = " << std::setw(12)
        << (value.empty() ? "(unset)" : value) << " [" << tiercc::params::source(p.name) << "]  " << p.doc << "\n";
  }
}

void printTransports(std::ostream& out) {
  out << "scale-out transports (default: " << tiercc::defaultTransportName() << "):\n";
  for (const std::string& name : tiercc::transportNames()) {
    auto why = tiercc::transportUnavailable(name);
    out << "  " << name << ": " << (why ? "unavailable: " + *why : std::string("available")) << "\n";
  }
}

void printDevices(std::ostream& out) {
  printTransports(out);
  out << "devices:\n";
  tiercc::info::printVerbsDevices(out);
  tiercc::info::printUcxResources(out);
  tiercc::info::printCudaDevices(out);
}

// What the selector would choose on D domains x k ranks with this environment's tier model
// (TIERCC_TUNE_*, TIERCC_EMU_*) and TIERCC_ALGO, and what each candidate costs.
void printAlgorithms(std::ostream& out, int domains, int domainSize) {
  using namespace tiercc;
  const Shape shape = Shape::uniformDomains(domains, domainSize);
  const TierModel model = TierModel::fromParams();
  Selector selector(shape, model, parseAlgoOverrides(params::getString("TIERCC_ALGO")),
                    static_cast<std::size_t>(params::getInt("TIERCC_ALLREDUCE_ONESHOT_BYTES")));
  out << "algorithms on " << domains << " domains x " << domainSize << " ranks (scale-up " << model.scaleUp.describe()
      << ", scale-out " << model.scaleOut.describe() << "; predicted time per candidate, * = chosen):\n";
  for (int c = 0; c < kNumCollectives; ++c) {
    const auto coll = static_cast<Collective>(c);
    if (coll == Collective::AllToAllv) continue;  // priced from the counts at run time
    for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, std::size_t{1} << 20, std::size_t{64} << 20}) {
      Request req;
      req.coll = coll;
      req.dt = DataType::U8;
      req.count = coll == Collective::Barrier ? 0 : bytes;
      req.radix = static_cast<int>(params::getInt("TIERCC_KNOMIAL_RADIX"));
      if (coll == Collective::AllGather || coll == Collective::ReduceScatter || coll == Collective::AllToAll)
        req.count = std::max<std::size_t>(1, bytes / shape.size());
      const std::string chosen(selector.choose(req));
      out << "  " << std::left << std::setw(15) << toString(coll) << std::right << std::setw(10) << bytes << " B:";
      for (const std::string& algo : algorithmsFor(coll)) {
        if (!unsupportedReason(algo, req, shape).empty()) continue;
        const double us = price(buildPlan(algo, req, shape), model).seconds * 1e6;
        out << "  " << (algo == chosen ? "*" : "") << algo << " " << std::fixed << std::setprecision(1) << us << "us";
      }
      out << "\n";
      if (coll == Collective::Barrier) break;
    }
  }
}

bool launched() { return std::getenv("TIERCC_RANK") || std::getenv("OMPI_COMM_WORLD_RANK") || std::getenv("RANK"); }

int usage(const char* argv0) {
  std::cerr << "usage: " << argv0 << " [--params] [--no-devices] [--algorithms DxK]\n"
            << "  --params      print only the TIERCC_* parameters with their values and sources\n"
            << "  --algorithms  print what the selector chooses on D domains x K ranks, with the prices\n"
            << "  --no-devices  skip the device probes\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool paramsOnly = false, devices = true;
  int algoDomains = 0, algoDomainSize = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--params"))
      paramsOnly = true;
    else if (!std::strcmp(argv[i], "--algorithms") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%d", &algoDomains, &algoDomainSize) != 2 || algoDomains < 1 || algoDomainSize < 1)
        return usage(argv[0]);
    } else if (!std::strcmp(argv[i], "--no-devices"))
      devices = false;
    else
      return usage(argv[0]);
  }
  try {
    if (paramsOnly) {
      printParams(std::cout);
      return 0;
    }
    if (algoDomains > 0) {
      printAlgorithms(std::cout, algoDomains, algoDomainSize);
      return 0;
    }
    std::ostringstream out;
    bool reportMachine = true;
    if (launched()) {
      tiercc::Communicator comm = tiercc::Communicator::fromEnv();
      char host[256] = {};
      gethostname(host, sizeof(host) - 1);
      std::cout << "rank " << comm.rank() << " of " << comm.size() << ": domain " << comm.domain() << ", local rank "
                << comm.localRank() << " of " << comm.domainSize() << ", host " << host << std::endl;
      comm.barrier();
      reportMachine = comm.rank() == 0;
      if (reportMachine)
        out << "topology: " << comm.numDomains() << (comm.numDomains() == 1 ? " domain" : " domains") << " x "
            << comm.domainSize() << " ranks (world size " << comm.size()
            << "); scale-up: shm; scale-out: " << comm.transportName() << "\n";
    } else {
      out << "topology: not launched (one process); run under tiercc-run to see the domains\n";
    }
    if (reportMachine) {
      out << "reduction kernels: " << tiercc::reduceIsaName() << " (TIERCC_REDUCE_ISA overrides)\n";
      if (devices) printDevices(out);
      printParams(out);
      std::cout << out.str() << std::flush;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tiercc-info: " << e.what() << "\n";
    return 1;
  }
}
