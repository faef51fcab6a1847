// Bad input gets a clear error and changes nothing, through the C++ API and the C ABI alike.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

// A one-rank communicator on an in-process store.
Communicator makeSolo() { return Communicator(makeInProcessStore(), 1, 0); }

template <typename F>
void expectError(ErrorCode code, const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BadInput, RejectedWithoutTouchingTheReceiveBuffer) {
  Communicator comm = makeSolo();
  std::vector<float> send(16, 1.0f), recv(16, 42.0f);
  expectError(ErrorCode::InvalidArgument, "send buffer is null",
              [&] { comm.allreduce(nullptr, recv.data(), 16, DataType::F32, ReduceOp::Sum); });
  expectError(ErrorCode::InvalidArgument, "receive buffer is null",
              [&] { comm.allreduce(send.data(), nullptr, 16, DataType::F32, ReduceOp::Sum); });
  expectError(ErrorCode::InvalidArgument, "overflows",
              [&] { comm.allreduce(send.data(), recv.data(), SIZE_MAX / 2, DataType::F32, ReduceOp::Sum); });
  expectError(ErrorCode::InvalidArgument, "unknown datatype",
              [&] { comm.allreduce(send.data(), recv.data(), 16, static_cast<DataType>(42), ReduceOp::Sum); });
  expectError(ErrorCode::InvalidArgument, "unknown reduction op",
              [&] { comm.allreduce(send.data(), recv.data(), 16, DataType::F32, static_cast<ReduceOp>(-1)); });
  expectError(ErrorCode::InvalidArgument, "overlap",
              [&] { comm.allreduce(recv.data(), recv.data() + 1, 8, DataType::F32, ReduceOp::Sum); });
  for (float v : recv) EXPECT_EQ(v, 42.0f);
  // Zero elements with null buffers is a valid no-op, as in NCCL.
  comm.allreduce(nullptr, nullptr, 0, DataType::F32, ReduceOp::Sum);
}

TEST(BadInput, RootsPeersAndInPlaceForms) {
  Communicator comm = makeSolo();
  float x[4] = {1, 2, 3, 4}, y[4] = {7, 7, 7, 7};
  expectError(ErrorCode::InvalidArgument, "root 1 is not in [0, 1)", [&] { comm.broadcast(x, y, 1, DataType::F32, 1); });
  expectError(ErrorCode::InvalidArgument, "root -1", [&] { comm.reduce(x, y, 1, DataType::F32, ReduceOp::Sum, -1); });
  expectError(ErrorCode::InvalidArgument, "is this rank", [&] { comm.send(x, 1, DataType::F32, 0); });
  expectError(ErrorCode::InvalidArgument, "peer 3", [&] { comm.recv(y, 1, DataType::F32, 3); });
  expectError(ErrorCode::InvalidArgument, "overlap", [&] { comm.alltoall(x, x + 1, 2, DataType::F32); });
  for (float v : y) EXPECT_EQ(v, 7.0f);
  // The in-place forms (NCCL's) are accepted: with one rank, recv == send.
  comm.allgather(x, x, 4, DataType::F32);
  comm.reduceScatter(x, x, 4, DataType::F32, ReduceOp::Sum);
  EXPECT_EQ(x[3], 4.0f);
}

TEST(BadInput, CallsAfterAbortFail) {
  Communicator comm = makeSolo();
  comm.abort();
  float x = 1, y = 7;
  expectError(ErrorCode::Aborted, "aborted", [&] { comm.allreduce(&x, &y, 1, DataType::F32, ReduceOp::Sum); });
  EXPECT_EQ(y, 7.0f);
}

TEST(BadInput, MovedFromCommunicatorIsEmpty) {
  Communicator comm = makeSolo();
  Communicator other = std::move(comm);
  EXPECT_FALSE(comm.valid());  // NOLINT(bugprone-use-after-move): testing exactly that
  expectError(ErrorCode::InvalidArgument, "empty communicator", [&] { (void)comm.rank(); });
  EXPECT_EQ(other.size(), 1);
}

TEST(BadInput, ConstructorArguments) {
  expectError(ErrorCode::InvalidArgument, "not in [0, 2)", [] { Communicator c(makeInProcessStore(), 2, 5); });
  expectError(ErrorCode::InvalidArgument, "world size", [] { Communicator c(makeInProcessStore(), 0, 0); });
  expectError(ErrorCode::InvalidArgument, "port", [] { Communicator c("127.0.0.1", 1, 0); });
}

// A port someone holds without serving a store: rank 0 cannot bind it, and says so within
// seconds instead of waiting its whole timeout on a store that will never answer.
TEST(BadInput, StorePortTakenByAnotherProgramIsAnError) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);  // bound, never listening
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ::setenv("TIERCC_TIMEOUT", "1s", 1);
  for (int size : {1, 2}) {
    try {
      Communicator c(taken, size, 0);
      ADD_FAILURE() << "rank 0 of " << size << " joined a store no one serves";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("could not bind the store at " + taken), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("no store answered there within 1000 ms"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("TIERCC_TIMEOUT");
  ::close(fd);
}

TEST(CApi, ErrorsCarryAMessage) {
  EXPECT_EQ(tiercc_allreduce(nullptr, nullptr, 1, tiercc_f32, tiercc_sum, nullptr), tiercc_invalid_argument);
  EXPECT_NE(std::strstr(tiercc_get_last_error(), "NULL"), nullptr) << tiercc_get_last_error();
  EXPECT_STREQ(tiercc_result_string(tiercc_timeout), "timeout");
  EXPECT_STREQ(tiercc_result_string(tiercc_not_supported), "not supported yet");
  EXPECT_EQ(tiercc_comm_init_rank(nullptr, "127.0.0.1:1", 1, 0), tiercc_invalid_argument);
  tiercc_comm_t comm = nullptr;
  EXPECT_EQ(tiercc_comm_init_rank(&comm, nullptr, 1, 0), tiercc_invalid_argument);
  EXPECT_EQ(comm, nullptr);
}

TEST(CApi, UseAfterDestroyIsReported) {
  // Rank 0 of a one-rank job hosts the store itself when nobody else does, on any free port
  // (port 0); with more ranks port 0 is no address the others could find.
  tiercc_comm_t comm = nullptr;
  ASSERT_EQ(tiercc_comm_init_rank(&comm, "127.0.0.1:0", 2, 0), tiercc_invalid_argument);
  ASSERT_EQ(tiercc_comm_init_rank(&comm, "127.0.0.1:0", 1, 0), tiercc_success) << tiercc_get_last_error();
  int rank = -1, size = -1, domains = -1;
  EXPECT_EQ(tiercc_comm_rank(comm, &rank), tiercc_success);
  EXPECT_EQ(tiercc_comm_size(comm, &size), tiercc_success);
  EXPECT_EQ(tiercc_comm_num_domains(comm, &domains), tiercc_success);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(domains, 1);
  EXPECT_EQ(tiercc_comm_rank(comm, nullptr), tiercc_invalid_argument);
  double x = 3, y = 0;
  EXPECT_EQ(tiercc_allreduce(&x, &y, 1, tiercc_f64, tiercc_sum, comm), tiercc_success);
  EXPECT_EQ(y, 3.0);
  EXPECT_EQ(tiercc_allreduce(&x, &y, 1, static_cast<tiercc_datatype_t>(99), tiercc_sum, comm), tiercc_invalid_argument);
  double z = 0;
  EXPECT_EQ(tiercc_broadcast(&x, &z, 1, tiercc_f64, 0, comm), tiercc_success);
  EXPECT_EQ(z, 3.0);
  EXPECT_EQ(tiercc_send(&x, 1, tiercc_f64, 0, comm), tiercc_invalid_argument);
  EXPECT_EQ(tiercc_comm_destroy(comm), tiercc_success);
  y = 5;
  EXPECT_EQ(tiercc_allreduce(&x, &y, 1, tiercc_f64, tiercc_sum, comm), tiercc_invalid_argument);
  EXPECT_NE(std::strstr(tiercc_get_last_error(), "destroyed"), nullptr) << tiercc_get_last_error();
  EXPECT_EQ(y, 5.0);
}

}  // namespace
}  // namespace tiercc
