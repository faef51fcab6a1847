// How tiercc-transport-bench gets its two ranks: it forks them itself around an in-process
// TcpStoreServer, or, when a launcher set TIERCC_STORE / TIERCC_RANK (tiercc-run -n 2), this
// process is one of them.
#pragma once

#include <functional>
#include <memory>

namespace tiercc {
class Store;
}

namespace tiercc::tbench {

/// Runs body(rank, store) on both ranks and returns main's exit status: 0 when every rank of
/// this process returned normally, 1 otherwise (a rank's exception is printed on stderr).
/// Self-launched ranks still running timeoutS seconds after the start, or 10 s after the
/// other rank failed, are killed.
int runTwoRanks(int timeoutS, const std::function<void(int rank, std::shared_ptr<Store> store)>& body);

}  // namespace tiercc::tbench
