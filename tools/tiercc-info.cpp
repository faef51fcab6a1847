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

#include "bootstrap/pmix_exchange.hpp"
#include "core/params.hpp"
#include "core/reduce_isa.hpp"
#include "core/units.hpp"
#include "runtime/env.hpp"
#include "tiercc/tiercc.hpp"
#include "tools/info/live_job.hpp"
#include "tools/info/plans.hpp"
#include "tools/info/probes.hpp"
#include "transport/factory.hpp"

namespace {

void printParams(std::ostream& out) {
  out << "parameters:\n";
  int width = 0;
  for (const auto& p : tiercc::params::all()) width = std::max(width, static_cast<int>(std::strlen(p.name)));
  for (const auto& p : tiercc::params::all()) {
    std::string value = tiercc::params::raw(p.name);
    if (std::strcmp(p.type, "secret") == 0 && !value.empty()) value = "(set)";
    out << "  " << std::left << std::setw(width) << p.name << " = " << std::setw(12)
        << (value.empty() ? "(unset)" : value) << " [" << tiercc::params::source(p.name) << "]  " << p.doc << "\n";
  }
}

void printTransports(std::ostream& out) {
  out << "scale-out transports (default: " << tiercc::defaultTransportName() << "):\n";
  for (const std::string& name : tiercc::transportNames()) {
    auto why = tiercc::transportUnavailable(name);
    auto passedOver = tiercc::transportPassedOver(name);
    out << "  " << name << ": " << (why ? "unavailable: " + *why : std::string("available"))
        << (!why && passedOver ? " (not the default: " + *passedOver + ")" : std::string()) << "\n";
  }
}

void printDevices(std::ostream& out) {
  printTransports(out);
  out << "devices:\n";
  tiercc::info::printVerbsDevices(out);
  tiercc::info::printUcxResources(out);
  tiercc::info::printCudaDevices(out);
}

bool launched() {
  return std::getenv("TIERCC_RANK") || std::getenv("OMPI_COMM_WORLD_RANK") || std::getenv("RANK") ||
         tiercc::startedUnderPmix();
}

int usage(const char* argv0) {
  std::cerr << "usage: " << argv0 << " [--params] [--no-devices] [--algorithms DxK] [--plan COLL DxK SIZE [--path P]]\n"
            << "       " << argv0 << " --job HOST:PORT [--comm N]\n"
            << "  --job         a live job, read from its store (TIERCC_STORE; tiercc-run -v prints it): each\n"
            << "                rank's collective, state, step, the peer and tier it waits on, its heartbeat's\n"
            << "                age, and what holds the job up; --comm N: the N-th communicator (default 1).\n"
            << "                A job with a store secret needs it in TIERCC_STORE_SECRET (as its ranks have it)\n"
            << "  --params      print only the TIERCC_* parameters with their values and sources\n"
            << "  --algorithms  print what the selector chooses on D domains x K ranks, with the prices\n"
            << "                (/if-asked: runs only where TIERCC_ALGO asks for it)\n"
            << "  --plan        print the plan the selector chooses for COLL (allreduce, alltoall, ...) of SIZE\n"
            << "                (8, 4K, 16M, 1G as tiercc-perf's -b) on D domains x K ranks, step by step, with\n"
            << "                each step's tier, group, bytes and predicted time, and the slow tier's bytes\n"
            << "                against the bound; --path staged (default), zero_copy or cma picks the domain path\n"
            << "  --no-devices  skip the device probes\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool paramsOnly = false, devices = true;
  int algoDomains = 0, algoDomainSize = 0, planDomains = 0, planDomainSize = 0;
  std::string planColl, planSize, planPath = "staged", job;
  int jobComm = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--params"))
      paramsOnly = true;
    else if (!std::strcmp(argv[i], "--algorithms") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%d", &algoDomains, &algoDomainSize) != 2 || algoDomains < 1 || algoDomainSize < 1)
        return usage(argv[0]);
    } else if (!std::strcmp(argv[i], "--plan") && i + 3 < argc) {
      planColl = argv[++i];
      if (std::sscanf(argv[++i], "%dx%d", &planDomains, &planDomainSize) != 2 || planDomains < 1 || planDomainSize < 1)
        return usage(argv[0]);
      planSize = argv[++i];
    } else if (!std::strcmp(argv[i], "--path") && i + 1 < argc) {
      planPath = argv[++i];
    } else if (!std::strcmp(argv[i], "--job") && i + 1 < argc) {
      job = argv[++i];
    } else if (!std::strcmp(argv[i], "--comm") && i + 1 < argc) {
      jobComm = std::atoi(argv[++i]);
      if (jobComm < 1) return usage(argv[0]);
    } else if (!std::strcmp(argv[i], "--no-devices"))
      devices = false;
    else
      return usage(argv[0]);
  }
  try {
    if (!job.empty()) {
      tiercc::info::printLiveJob(std::cout, job, jobComm);
      return 0;
    }
    if (paramsOnly) {
      printParams(std::cout);
      return 0;
    }
    if (algoDomains > 0) {
      tiercc::info::printAlgorithms(std::cout, algoDomains, algoDomainSize);
      return 0;
    }
    if (planDomains > 0) {
      tiercc::info::printPlan(std::cout, planColl, planDomains, planDomainSize,
                              tiercc::units::parseMessageSize(planSize, "--plan size"), planPath);
      return 0;
    }
    std::ostringstream out;
    bool reportMachine = true;
    if (launched()) {
      tiercc::Communicator comm = tiercc::Communicator::fromEnv();
      char host[256] = {};
      gethostname(host, sizeof(host) - 1);
      std::cout << "rank " << comm.rank() << " of " << comm.size() << ": domain " << comm.domain() << ", local rank "
                << comm.localRank() << " of " << comm.domainSize() << ", host " << host << "; scale-out "
                << comm.transportName() << " at " << comm.scaleOutEndpoint() << std::endl;
      comm.barrier();
      reportMachine = comm.rank() == 0;
      if (reportMachine)
        out << "topology: " << comm.numDomains() << (comm.numDomains() == 1 ? " domain" : " domains") << " x "
            << comm.domainSize() << " ranks (world size " << comm.size() << "); scale-up: " << comm.scaleUpName()
            << "; scale-out: " << comm.transportName() << "\n";
    } else {
      out << "topology: not launched (one process); run under tiercc-run to see the domains\n";
    }
    if (reportMachine) {
      out << "reduction kernels: " << tiercc::reduceIsaName() << " (TIERCC_REDUCE_ISA overrides)\n";
      out << "PMIx bootstrap: "
          << (tiercc::pmixBuiltIn() ? "built in (mpirun, srun --mpi=pmix: no tiercc variables needed)"
                                    : "not built (apt-get install libpmix-dev, then rebuild)")
          << "\n";
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
