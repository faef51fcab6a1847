// Checks of one collective call through the public API against the independent reference,
// shared by the multi-process collective tests: the block pattern that the data-moving
// collectives carry, and one check per collective with the hooks in which the tests differ.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/collective_reference.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {

using Buffer = std::vector<std::uint8_t>;

/// Element i of the block that rank `from` addresses to rank `to`: small, exact in every type.
inline double blockValue(int from, int to, std::size_t i) { return double((from * 7 + to * 3 + i) % 100); }

/// The block that rank `from` addresses to rank `to`, `count` elements of `dt`.
inline Buffer pattern(DataType dt, std::size_t count, int from, int to) {
  const std::size_t es = dataTypeSize(dt);
  Buffer b(count * es);
  for (std::size_t i = 0; i < count; ++i) encode(dt, blockValue(from, to, i), b.data() + i * es);
  return b;
}

/// A case's name in failure messages: "allgather f32 count 7 in place".
inline std::string caseName(const char* coll, DataType dt, std::size_t count, bool inPlace) {
  return std::string(coll) + " " + toString(dt) + " count " + std::to_string(count) + (inPlace ? " in place" : "");
}

/// What a test adds to the shared checks. The defaults check the data and nothing else.
struct CheckOptions {
  /// Appended to the name of each case of collective `coll` (which variant of it ran).
  std::function<std::string(const char* coll)> tag;
  /// Called right after each collective returns, before its data are checked.
  std::function<void(const char* coll, const std::string& what)> after;
  /// Allreduce out of place: also check that the send buffer was left as it was.
  bool checkAllreduceSendBuffer = false;
  /// Broadcast out of place: non-roots pass a send buffer of their own (which must be
  /// ignored) instead of nullptr.
  bool broadcastNonRootSendBuffer = false;

  std::string tagOf(const char* coll) const { return tag ? tag(coll) : std::string(); }
  void afterCall(const char* coll, const std::string& what) const {
    if (after) after(coll, what);
  }
};

/// Allreduce; returns the result, which the caller may check further.
inline Buffer checkAllreduce(Communicator& c, DataType dt, ReduceOp op, std::size_t count, bool inPlace,
                             const CheckOptions& o = {}) {
  const std::string what = caseName("allreduce", dt, count, inPlace) + " " + toString(op) + o.tagOf("allreduce");
  Buffer in = inputBuffer(dt, op, c.rank(), count), out(in.size(), 0x5a);
  if (inPlace) {
    out = in;
    c.allreduce(out.data(), out.data(), count, dt, op);
  } else {
    c.allreduce(in.data(), out.data(), count, dt, op);
    if (o.checkAllreduceSendBuffer)
      TIERCC_CHECK(in == inputBuffer(dt, op, c.rank(), count), what << ": the send buffer was written");
  }
  o.afterCall("allreduce", what);
  checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
  return out;
}

inline void checkBroadcast(Communicator& c, DataType dt, std::size_t count, int root, bool inPlace,
                           const CheckOptions& o = {}) {
  const std::string what =
      caseName("broadcast", dt, count, inPlace) + " root " + std::to_string(root) + o.tagOf("broadcast");
  Buffer want = pattern(dt, count, root, root);
  Buffer in = c.rank() == root ? want : Buffer(want.size(), 0x11);
  Buffer out(want.size(), 0x22);
  if (inPlace) {
    out = in;
    c.broadcast(out.data(), out.data(), count, dt, root);
  } else {
    const bool passIn = c.rank() == root || o.broadcastNonRootSendBuffer;
    c.broadcast(passIn ? in.data() : nullptr, out.data(), count, dt, root);
  }
  o.afterCall("broadcast", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
}

inline void checkReduce(Communicator& c, DataType dt, ReduceOp op, std::size_t count, int root, bool inPlace,
                        const CheckOptions& o = {}) {
  const std::string what =
      caseName("reduce", dt, count, inPlace) + " " + toString(op) + " root " + std::to_string(root) + o.tagOf("reduce");
  Buffer in = inputBuffer(dt, op, c.rank(), count);
  Buffer out(in.size(), 0x5a);
  if (inPlace) {
    out = in;
    c.reduce(out.data(), out.data(), count, dt, op, root);
  } else {
    c.reduce(in.data(), out.data(), count, dt, op, root);
  }
  o.afterCall("reduce", what);
  if (c.rank() == root)
    checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
  else if (!inPlace)
    TIERCC_CHECK(out == Buffer(in.size(), 0x5a), what << ": a non-root receive buffer was written");
}

inline void checkAllgather(Communicator& c, DataType dt, std::size_t count, bool inPlace, const CheckOptions& o = {}) {
  const std::string what = caseName("allgather", dt, count, inPlace) + o.tagOf("allgather");
  const std::size_t bytes = count * dataTypeSize(dt);
  Buffer want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, r, 0);
    want.insert(want.end(), b.begin(), b.end());
  }
  Buffer out(want.size(), 0x33);
  Buffer in = pattern(dt, count, c.rank(), 0);
  if (inPlace) {
    if (bytes > 0) std::memcpy(out.data() + c.rank() * bytes, in.data(), bytes);  // count 0: no buffers at all
    c.allgather(out.data() + c.rank() * bytes, out.data(), count, dt);
  } else {
    c.allgather(in.data(), out.data(), count, dt);
  }
  o.afterCall("allgather", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
}

inline void checkReduceScatter(Communicator& c, DataType dt, ReduceOp op, std::size_t count, bool inPlace,
                               const CheckOptions& o = {}) {
  const std::string what =
      caseName("reduce_scatter", dt, count, inPlace) + " " + toString(op) + o.tagOf("reduce_scatter");
  const std::size_t block = count * dataTypeSize(dt), total = count * c.size();
  Buffer in = inputBuffer(dt, op, c.rank(), total);
  Buffer all = expectedBuffer(dt, op, c.size(), total);
  Buffer want(all.begin() + c.rank() * block, all.begin() + (c.rank() + 1) * block);
  Buffer out(block, 0x44);
  if (inPlace) {
    c.reduceScatter(in.data(), in.data() + c.rank() * block, count, dt, op);
    out.assign(in.begin() + c.rank() * block, in.begin() + (c.rank() + 1) * block);
  } else {
    c.reduceScatter(in.data(), out.data(), count, dt, op);
  }
  o.afterCall("reduce_scatter", what);
  checkResult(dt, op, out, want, what);
}

inline void checkAlltoall(Communicator& c, DataType dt, std::size_t count, bool inPlace, const CheckOptions& o = {}) {
  const std::string what = caseName("alltoall", dt, count, inPlace) + o.tagOf("alltoall");
  Buffer in, want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, c.rank(), r), w = pattern(dt, count, r, c.rank());
    in.insert(in.end(), b.begin(), b.end());
    want.insert(want.end(), w.begin(), w.end());
  }
  Buffer out(in.size(), 0x55);
  if (inPlace) {
    out = in;
    c.alltoall(out.data(), out.data(), count, dt);
  } else {
    c.alltoall(in.data(), out.data(), count, dt);
  }
  o.afterCall("alltoall", what);
  TIERCC_CHECK(out == want, what << ": wrong data");
}

}  // namespace tiercc::test
