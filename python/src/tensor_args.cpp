#include "python/src/tensor_args.hpp"

#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include "python/src/tensor_types.hpp"

namespace tiercc::torch {

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "tiercc ", op, ": takes one tensor per call (one device per process), got ",
              tensors.size());
  requireCpuDense(tensors[0], op, "input");
  return tensors[0];
}

std::string detailOf(const at::Tensor& t) { return c10::str(t.scalar_type(), ", ", t.numel(), " elements"); }

void requireSameType(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role) {
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "tiercc ", op, ": the ", role, " tensor is ", t.scalar_type(),
              " but the input is ", like.scalar_type());
}

void requireRank(std::int64_t r, int size, const char* op, const char* role) {
  TORCH_CHECK(r >= 0 && r < size, "tiercc ", op, ": ", role, " ", r, " is not a rank of this group (size ", size,
              ")");
}

const std::vector<at::Tensor>& listLike(const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& like,
                                        int size, const char* op, const char* role) {
  TORCH_CHECK(lists.size() == 1 && lists[0].size() == static_cast<std::size_t>(size), "tiercc ", op, ": needs one ",
              role, " list of ", size, " tensors");
  for (const at::Tensor& t : lists[0]) {
    requireCpuDense(t, op, role);
    requireSameType(t, like, op, role);
    TORCH_CHECK(t.numel() == like.numel(), "tiercc ", op, ": an ", role, " tensor has ", t.numel(),
                " elements; it needs ", like.numel());
  }
  return lists[0];
}

void requireNoList(const std::vector<std::vector<at::Tensor>>& lists, int root, const char* op, const char* role) {
  TORCH_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), "tiercc ", op, ": only the root (rank ", root,
              ") takes an ", role, " list");
}

bool backToBack(const std::vector<at::Tensor>& ts) {
  if (ts.empty()) return false;
  auto* next = static_cast<const char*>(ts[0].data_ptr());
  for (const at::Tensor& t : ts) {
    if (!t.is_contiguous() || t.scalar_type() != ts[0].scalar_type() || t.data_ptr() != next) return false;
    next += t.numel() * t.element_size();
  }
  return true;
}

at::Tensor packed(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> flat;
  flat.reserve(ts.size());
  for (const at::Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

void unpack(const at::Tensor& flat, const std::vector<at::Tensor>& ts) {
  std::int64_t at = 0;
  for (const at::Tensor& t : ts) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

std::int64_t totalElements(const std::vector<at::Tensor>& ts) {
  std::int64_t n = 0;
  for (const at::Tensor& t : ts) n += t.numel();
  return n;
}

void offsets(const std::vector<std::size_t>& counts, std::vector<std::size_t>& displs) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = at;
    at += counts[i];
  }
}

}  // namespace tiercc::torch
