// The Python module tiercc._torch: the process group class and its factory, which
// tiercc/torch/__init__.py registers with torch.distributed as the backend "tiercc".
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/python.h>

#include "python/src/process_group.hpp"

namespace py = pybind11;
using tiercc::torch::ProcessGroupTiercc;

namespace {

c10::intrusive_ptr<ProcessGroupTiercc> createProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, std::chrono::duration<double> timeout) {
  py::gil_scoped_release nogil;  // joining takes as long as the slowest rank needs to arrive
  return c10::make_intrusive<ProcessGroupTiercc>(
      store, rank, size, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

py::dict statsOf(const ProcessGroupTiercc& pg) {
  const tiercc::TierStats s = pg.stats();
  py::dict d;
  d["collectives"] = s.collectives;
  d["scale_up_bytes"] = s.scaleUpBytes;
  d["scale_out_bytes"] = s.scaleOutBytes;
  d["scale_out_bound_bytes"] = s.scaleOutBoundBytes;
  d["algorithm"] = s.algorithm;
  d["scale_up_path"] = s.scaleUpPath;
  return d;
}

}  // namespace

PYBIND11_MODULE(_torch, m) {
  m.doc() = "tiercc's c10d backend (import tiercc.torch to register it)";
  py::object processGroup = py::module::import("torch.distributed").attr("ProcessGroup");
  py::class_<ProcessGroupTiercc, c10::intrusive_ptr<ProcessGroupTiercc>>(m, "ProcessGroupTiercc", processGroup)
      .def(
          "empty_shared",
          [](ProcessGroupTiercc& pg, const std::vector<int64_t>& sizes, py::object dtype) {
            const at::ScalarType type = torch::python::detail::py_object_to_dtype(std::move(dtype));
            py::gil_scoped_release nogil;
            return pg.emptyShared(sizes, type);
          },
          py::arg("sizes"), py::arg("dtype"))
      .def("describe", &ProcessGroupTiercc::describe)
      .def("stats", &statsOf)
      .def("__repr__", [](const ProcessGroupTiercc& pg) { return "<tiercc process group: " + pg.describe() + ">"; });
  m.def("create_process_group", &createProcessGroup, py::arg("store"), py::arg("rank"), py::arg("size"),
        py::arg("timeout"));
}
