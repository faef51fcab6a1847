// The arguments of the backend's operations: checks that say what was wrong, and the packing of
// tensor lists into the dense blocks tiercc's calls take.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tiercc/tiercc.hpp>

namespace tiercc::torch {

/// The one tensor per call a collective takes (one device per process), checked.
const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op);
/// "Float, 1024 elements", for operation names.
std::string detailOf(const at::Tensor& t);
void requireSameType(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role);
void requireRank(std::int64_t r, int size, const char* op, const char* role);
/// The one list of `size` tensors an operation takes (torch wraps it in an outer list), each like
/// `like` in type and element count.
const std::vector<at::Tensor>& listLike(const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& like,
                                        int size, const char* op, const char* role);
/// Ranks other than the root of gather (scatter) pass no output (input) list.
void requireNoList(const std::vector<std::vector<at::Tensor>>& lists, int root, const char* op, const char* role);

/// Whether the tensors lie back to back in one block, as torch.empty(n * k).chunk(k) makes them:
/// then a collective writes them in place, with no gather buffer and no copies out of it.
bool backToBack(const std::vector<at::Tensor>& ts);
/// The tensors' values one after the other, in a new dense tensor.
at::Tensor packed(const std::vector<at::Tensor>& ts);
/// Copies consecutive runs of `flat` into the tensors.
void unpack(const at::Tensor& flat, const std::vector<at::Tensor>& ts);
std::int64_t totalElements(const std::vector<at::Tensor>& ts);

/// Element counts and offsets of tiercc's all-to-allv, one per rank.
struct Exchange {
  std::vector<std::size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  explicit Exchange(int size) : sendCounts(size, 0), sendDispls(size, 0), recvCounts(size, 0), recvDispls(size, 0) {}
  void run(Communicator& c, const void* send, void* recv, DataType dt) const {
    c.alltoallv(send, sendCounts.data(), sendDispls.data(), recv, recvCounts.data(), recvDispls.data(), dt);
  }
};
/// Offsets from counts, in order.
void offsets(const std::vector<std::size_t>& counts, std::vector<std::size_t>& displs);

}  // namespace tiercc::torch
