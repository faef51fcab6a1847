// A job whose ranks say what they moved: each runs a few collectives of several kinds and writes
// its own statistics (Communicator::stats()) to $TIERCC_TEST_DIR/stats-<rank>.json. With
// TIERCC_TEST_STAY=1 it then stays up (at most a minute) until $TIERCC_TEST_DIR/done exists, to be
// scraped. tests/metrics/prometheus_test.py compares what Prometheus scraped with those files,
// tests/trace/trace_test.py the timeline's bytes.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tiercc/tiercc.hpp"

int main() {
  const char* dir = std::getenv("TIERCC_TEST_DIR");
  if (!dir) {
    std::fprintf(stderr, "stats_job: set TIERCC_TEST_DIR\n");
    return 2;
  }
  tiercc::Communicator comm = tiercc::Communicator::fromEnv();
  const int n = comm.size();
  std::vector<float> a(1 << 18, 1.0f), b((1 << 18) * n);
  for (int i = 0; i < 5; ++i)
    comm.allreduce(a.data(), a.data(), a.size(), tiercc::DataType::F32, tiercc::ReduceOp::Sum);
  comm.allreduce(a.data(), a.data(), 8, tiercc::DataType::F32, tiercc::ReduceOp::Max);
  comm.allgather(a.data(), b.data(), 1 << 16, tiercc::DataType::F32);
  comm.alltoall(b.data(), b.data() + (b.size() / 2), 1 << 12, tiercc::DataType::F32);
  comm.broadcast(a.data(), a.data(), 1 << 14, tiercc::DataType::F32, 1);
  comm.barrier();
  const tiercc::TierStats s = comm.stats();
  const std::string path = std::string(dir) + "/stats-" + std::to_string(comm.rank()) + ".json";
  {
    std::ofstream out(path + ".tmp");
    out << "{\"rank\":" << comm.rank() << ",\"domain\":" << comm.domain() << ",\"collectives\":" << s.collectives
        << ",\"scaleup_bytes\":" << s.scaleUpBytes << ",\"scaleout_bytes\":" << s.scaleOutBytes
        << ",\"scaleout_bound_bytes\":" << s.scaleOutBoundBytes << "}\n";
  }
  std::rename((path + ".tmp").c_str(), path.c_str());  // whole, or not there
  const char* stay = std::getenv("TIERCC_TEST_STAY");
  const std::string done = std::string(dir) + "/done";
  for (int i = 0; stay && std::string(stay) == "1" && i < 600 && access(done.c_str(), F_OK) != 0; ++i)
    usleep(100 * 1000);
  comm.barrier();
  return 0;
}
