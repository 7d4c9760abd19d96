// Distributed training: the MPI communicator and DistOpt (singa._singa.dist).
// python/singa/opt.py's DistOpt wraps these with SINGA's names.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "singa/dist/communicator.h"
#include "singa/opt/dist_opt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace singa {

void BindDist(nb::module_& m) {
  nb::module_ d = m.def_submodule("dist", "data-parallel training over MPI");
  d.def("launched_by_mpi", &dist::LaunchedByMpi);

  // Waits and backward may run for long (up to the timeout): the GIL is
  // released, and taken again by any Python backward reached.
  using nb::call_guard;
  using Release = nb::gil_scoped_release;
  nb::class_<dist::Communicator>(d, "Communicator")
      .def(
          "__init__",
          [](dist::Communicator* self, int64_t buff_size, double timeout) {
            new (self) dist::Communicator(dist::Communicator::Options{buff_size, timeout});
          },
          "buff_size"_a = 4194304, "timeout"_a = 0.0)
      .def_prop_ro("rank", &dist::Communicator::rank)
      .def_prop_ro("world_size", &dist::Communicator::world_size)
      .def_prop_ro("local_rank", &dist::Communicator::local_rank)
      .def_prop_ro("buff_size", &dist::Communicator::buff_size)
      .def_prop_ro("timeout", &dist::Communicator::timeout_seconds)
      .def_prop_ro("broken", &dist::Communicator::broken)
      .def_prop_ro("bytes_sent", &dist::Communicator::bytes_sent)
      .def_prop_ro("wait_seconds", &dist::Communicator::wait_seconds)
      .def("reset_stats", &dist::Communicator::ResetStats)
      .def("all_reduce", &dist::Communicator::AllReduce, "t"_a)
      .def("all_reduce_half", &dist::Communicator::AllReduceHalf, "t"_a)
      .def("fused_all_reduce", &dist::Communicator::FusedAllReduce, "ts"_a, "send"_a = true)
      .def("fused_all_reduce_half", &dist::Communicator::FusedAllReduceHalf, "ts"_a,
           "send"_a = true)
      .def("sparse_all_reduce", &dist::Communicator::SparseAllReduce, "ts"_a, "residuals"_a,
           "spars"_a, "topK"_a, call_guard<Release>())
      .def("broadcast", &dist::Communicator::Broadcast, "t"_a, "root"_a = 0, call_guard<Release>())
      .def("wait", &dist::Communicator::Wait, call_guard<Release>());

  nb::class_<opt::DistOpt>(d, "DistOpt")
      .def(
          "__init__",
          [](opt::DistOpt* self, std::shared_ptr<opt::Optimizer> o, int64_t buff_size,
             double timeout) {
            new (self) opt::DistOpt(std::move(o), dist::Communicator::Options{buff_size, timeout});
          },
          "opt"_a, "buff_size"_a = 4194304, "timeout"_a = 0.0)
      .def("backward_and_update", &opt::DistOpt::BackwardAndUpdate, "loss"_a, call_guard<Release>())
      .def("backward_and_update_half", &opt::DistOpt::BackwardAndUpdateHalf, "loss"_a,
           call_guard<Release>())
      .def("backward_and_partial_update", &opt::DistOpt::BackwardAndPartialUpdate, "loss"_a,
           call_guard<Release>())
      .def("backward_and_sparse_update", &opt::DistOpt::BackwardAndSparseUpdate, "loss"_a,
           "spars"_a = 0.05f, "topK"_a = false, call_guard<Release>())
      .def("broadcast_params", &opt::DistOpt::BroadcastParams, "params"_a, call_guard<Release>())
      .def_prop_ro("communicator", &opt::DistOpt::communicator, nb::rv_policy::reference_internal)
      .def_prop_ro("global_rank", &opt::DistOpt::global_rank)
      .def_prop_ro("local_rank", &opt::DistOpt::local_rank)
      .def_prop_ro("world_size", &opt::DistOpt::world_size);
}

}  // namespace singa
