// Uses the installed C++ API: a one-rank job whose rank 0 hosts its own store.
#include <tiercc/tiercc.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  std::string store = argc > 1 ? argv[1] : "127.0.0.1:29999";
  tiercc::Communicator comm(store, 1, 0);
  float x = 2.5f, y = 0;
  comm.allreduce(&x, &y, 1, tiercc::DataType::F32, tiercc::ReduceOp::Sum);
  std::printf("consumer_cmake: size %d, allreduce %g\n", comm.size(), y);
  return y == 2.5f ? EXIT_SUCCESS : EXIT_FAILURE;
}
