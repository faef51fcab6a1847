// tiercc-run: starts a local tiercc job (like mpirun/torchrun for one machine).
// Hosts the bootstrap store, starts N ranks with their TIERCC_* environment, prefixes their
// output by rank and domain, forwards interrupts and stops the whole job when one rank fails.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "core/errors.hpp"
#include "tools/run/free_port.hpp"
#include "tools/run/job_secret.hpp"
#include "tools/run/job_supervisor.hpp"
#include "tools/run/options.hpp"
#include "tools/run/rank_environment.hpp"
#include "tools/run/signal_channel.hpp"
#include "tools/run/trace_merge.hpp"

namespace {

constexpr int kUsageError = 2;
constexpr int kLauncherError = 1;

// Ranks get fds 0-2 by dup2; if the launcher started with one closed, a pipe could land there.
void ensureStandardFdsOpen() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
  }
}

std::optional<tiercc::run::RunOptions> parseOrExplain(int argc, char** argv, int& exitCode) {
  try {
    auto options = tiercc::run::parseRunOptions(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << tiercc::run::usageText();
      exitCode = 0;
      return std::nullopt;
    }
    return options;
  } catch (const tiercc::Error& e) {
    std::cerr << "tiercc-run: " << e.what() << "\n" << tiercc::run::usageText();
    exitCode = kUsageError;
    return std::nullopt;
  }
}

int runJob(const tiercc::run::RunOptions& options) {
  // Blocking the signals must come before the store server starts its thread (see SignalChannel).
  tiercc::run::SignalChannel signals;
  std::optional<tiercc::TcpStoreServer> server;
  tiercc::run::JobAddresses addresses;
  try {
    addresses.storeSecret = tiercc::run::jobSecret();
    server.emplace(options.storeBind, 0, tiercc::TcpStoreServer::Limits{}, addresses.storeSecret);
  } catch (const std::exception& e) {
    std::cerr << "tiercc-run: cannot start the bootstrap store on " << options.storeBind << ": " << e.what()
              << "\n";
    return kLauncherError;
  }
  addresses.store = tiercc::run::storeAddressForRanks(options.storeBind, server->port());
  // PyTorch's env:// rendezvous needs an address and port where rank 0 hosts its store, unless
  // the launcher's environment names them. Rank 0 runs here, or in domain 0's namespace.
  if (!std::getenv("MASTER_ADDR") || !std::getenv("MASTER_PORT")) {
    std::string host = addresses.store.substr(0, addresses.store.rfind(':'));
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    addresses.torchMasterAddr = options.netnsPrefix ? tiercc::run::managementAddressOf(0) : host;
    try {
      // A port free here: a fresh namespace of rank 0's has no listeners of its own yet.
      addresses.torchMasterPort = tiercc::run::freeTcpPort(host);
    } catch (const std::exception& e) {
      std::cerr << "tiercc-run: no port for PyTorch's store (MASTER_PORT stays unset): " << e.what() << "\n";
    }
  }
  if (options.traceDir) {
    // Files of an earlier job would merge into this one's timeline.
    std::error_code ec;
    std::filesystem::create_directories(*options.traceDir, ec);
    for (const auto& entry : std::filesystem::directory_iterator(*options.traceDir, ec))
      if (entry.path().filename().string().rfind("tiercc-trace-", 0) == 0) std::filesystem::remove(entry.path(), ec);
  }
  tiercc::run::JobSupervisor supervisor(options, signals);
  supervisor.launch(addresses);
  const int status = supervisor.run();
  if (options.traceDir) {
    try {
      const int merged = tiercc::run::mergeTraces(*options.traceDir);
      std::cerr << "tiercc-run: " << merged << " timelines merged into " << *options.traceDir << "/trace.json\n";
    } catch (const std::exception& e) {
      std::cerr << "tiercc-run: " << e.what() << "\n";
      return status ? status : kLauncherError;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int exitCode = 0;
  auto options = parseOrExplain(argc, argv, exitCode);
  if (!options) return exitCode;
  ensureStandardFdsOpen();
  // A reader of our output that goes away must not kill the launcher (and orphan the ranks).
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return runJob(*options);
  } catch (const std::exception& e) {
    std::cerr << "tiercc-run: " << e.what() << "\n";
    return kLauncherError;
  }
}
