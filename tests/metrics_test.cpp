// The /metrics endpoint: the text follows Prometheus' format (each family once, histograms
// cumulative), and a live job's ranks serve their own counts, equal to their stats. A real
// Prometheus scraping a job is tests/metrics/prometheus_test.py.
#include "runtime/metrics.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/free_ports.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(Metrics, TextHasEachFamilyOnceAndCumulativeHistograms) {
  MetricSnapshot a, b;
  a.rank = 0;
  b.rank = 1;
  a.communicator = "tiercc/1/";
  b.communicator = "tiercc/1/split0/c0/";
  a.counts.called(Collective::AllReduce, Algorithm::Hierarchical, 4 << 20, 2e-3);
  a.counts.called(Collective::AllReduce, Algorithm::Hierarchical, 4 << 20, 5e-5);
  a.counts.called(Collective::AllGather, Algorithm::Ring, 100, 20);  // past the last bucket
  a.counts.failed(ErrorCode::Timeout);
  a.counts.scaleOutBytes = 123;
  a.heartbeatAges = {{3, 0.25}};
  b.counts.called(Collective::Barrier, Algorithm::Dissemination, 1, 1e-6);
  const std::string text = renderMetrics({a, b});
  for (const char* family : {"tiercc_collectives_total", "tiercc_bytes_total", "tiercc_operation_seconds",
                             "tiercc_failures_total", "tiercc_heartbeat_age_seconds", "tiercc_sequence"})
    EXPECT_EQ(occurrences(text, std::string("# TYPE ") + family + " "), 1u) << family << "\n" << text;
  EXPECT_NE(text.find("tiercc_collectives_total{rank=\"0\",domain=\"0\",comm=\"tiercc/1/\",coll=\"allreduce\","
                      "algorithm=\"hierarchical\"} 2\n"),
            std::string::npos)
      << text;
  const std::string le =
      "tiercc_operation_seconds_bucket{rank=\"0\",domain=\"0\",comm=\"tiercc/1/\",coll=\"allreduce\","
      "size=\"le_16MiB\",le=\"";
  EXPECT_NE(text.find(le + "3e-05\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(le + "0.0001\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(le + "0.01\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find(le + "+Inf\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size=\"le_1KiB\",le=\"10\"} 0\n"), std::string::npos) << text;  // the 20 s allgather
  EXPECT_NE(text.find("size=\"le_1KiB\",le=\"+Inf\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tiercc_failures_total{rank=\"0\",domain=\"0\",comm=\"tiercc/1/\",code=\"timeout\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("tiercc_heartbeat_age_seconds{rank=\"0\",domain=\"0\",comm=\"tiercc/1/\",peer=\"3\"} 0.25\n"),
            std::string::npos);
  EXPECT_NE(text.find("comm=\"tiercc/1/split0/c0/\",coll=\"barrier\""), std::string::npos) << text;
  // A family's samples are together: no family's name appears after the next family's TYPE line.
  EXPECT_LT(text.rfind("tiercc_collectives_total{"), text.find("# TYPE tiercc_bytes_total"));
}

// A plain HTTP GET of the rank's own endpoint.
std::string httpGet(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  TIERCC_CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0, "connect to port " << port);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  TIERCC_CHECK(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()), "write");
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return reply;
}

// Two ranks on this host serve on port P and P + 1; each reads its own and finds its stats.
TEST(Metrics, EachRankServesItsOwnCounts) {
  const std::uint16_t base = freePortsBelowEphemeral(2);  // a rank serves on base + its index
  ASSERT_NE(base, 0) << "no two free ports";
  JobOptions jo;
  jo.env = {{"TIERCC_METRICS_PORT", std::to_string(base)}};
  jo.timeout = std::chrono::seconds(60);
  JobResult result = runRanks(
      2,
      [base](int rank, const std::string& store) {
        Communicator comm(store, 2, rank);
        std::vector<float> buf(1 << 16, 1.0f);
        for (int i = 0; i < 3; ++i) comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
        comm.barrier();
        const TierStats s = comm.stats();
        const std::string reply = httpGet(static_cast<std::uint16_t>(base + rank), "/metrics");
        TIERCC_CHECK(reply.rfind("HTTP/1.1 200 OK\r\n", 0) == 0, reply);
        TIERCC_CHECK(reply.find("Content-Type: text/plain; version=0.0.4") != std::string::npos, reply);
        const std::string me = "{rank=\"" + std::to_string(rank) + "\"";
        TIERCC_CHECK(reply.find("tiercc_bytes_total" + me) != std::string::npos, reply);
        TIERCC_CHECK(reply.find("tier=\"scale-up\",rail=\"" + std::to_string(rank) + "\"} " +
                                std::to_string(s.scaleUpBytes) + "\n") != std::string::npos,
                     "scale-up bytes " << s.scaleUpBytes << " not in\n"
                                       << reply);
        TIERCC_CHECK(reply.find("coll=\"allreduce\",algorithm=") != std::string::npos, reply);
        TIERCC_CHECK(reply.find("state=\"completed\"} 3\n") != std::string::npos, reply);
        TIERCC_CHECK(httpGet(static_cast<std::uint16_t>(base + rank), "/other").rfind("HTTP/1.1 404", 0) == 0,
                     "no 404");
        comm.barrier();
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// A timeline that cannot be written is a clear error at init, and a bad metrics port too; the
// communicator that failed leaves nothing registered behind (a SIGUSR1 dump afterwards finds only
// the live one).
TEST(Observability, BadTimelineFolderAndMetricsPortAreClearErrors) {
  JobOptions jo;
  jo.timeout = std::chrono::seconds(60);
  JobResult result = runRanks(1, [](int, const std::string& store) {
    Communicator good(store, 1, 0);  // registers the SIGUSR1 dump
    ::setenv("TIERCC_TRACE", "/proc/no/such/folder", 1);
    try {
      Communicator bad(store, 1, 0);
      TIERCC_CHECK(false, "a communicator with an unwritable TIERCC_TRACE was made");
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::SystemError, toString(e.code()) << ": " << e.what());
      TIERCC_CHECK(std::string(e.what()).find("TIERCC_TRACE: cannot write /proc/no/such/folder") != std::string::npos,
                   e.what());
    }
    ::unsetenv("TIERCC_TRACE");
    ::setenv("TIERCC_METRICS_PORT", "65535", 1);
    ::setenv("TIERCC_DOMAIN_SIZE", "1", 1);
    try {
      Communicator bad(store, 1, 0);
      (void)bad;  // index 0 on its host: 65535 is a port
    } catch (const Error& e) {
      TIERCC_CHECK(false, "port 65535 + 0 was refused: " << e.what());
    }
    ::setenv("TIERCC_METRICS_PORT", "70000", 1);
    try {
      Communicator bad(store, 1, 0);
      TIERCC_CHECK(false, "TIERCC_METRICS_PORT=70000 was accepted");
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::InvalidArgument, toString(e.code()) << ": " << e.what());
    }
    ::unsetenv("TIERCC_METRICS_PORT");
    ::raise(SIGUSR1);  // only `good` is registered: a dump, not a crash
    usleep(200 * 1000);
    good.barrier();
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
