#pragma once
// Shared pieces of the Python bindings: running a long library call without
// the GIL (and stoppable by Ctrl-C), numpy views over C++-owned buffers, and
// nlohmann::json -> Python objects.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "search/pipeline.hpp"

namespace verity::python {
namespace py = pybind11;

// Runs f() with the GIL released. SIGINT during the call sets the library's
// interrupt flag (and still reaches Python's handler), so the call stops at
// its next check_interrupt(); the Interrupted it throws becomes Python's
// KeyboardInterrupt, raised by Python's own SIGINT handler where it runs.
template <typename F>
auto without_gil(F&& f) -> decltype(f()) {
  try {
    InterruptCapture capture;
    py::gil_scoped_release release;
    return f();
  } catch (const Interrupted&) {
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    PyErr_SetNone(PyExc_KeyboardInterrupt);  // off the main thread no handler runs
    throw py::error_already_set();
  }
}

// For short calls that never check for an interrupt (one search): the GIL
// alone, without installing the SIGINT capture.
template <typename F>
auto without_gil_short(F&& f) -> decltype(f()) {
  py::gil_scoped_release release;
  return f();
}

// A numpy array over `data`, kept alive by `owner` (no copy).
template <typename T, typename Owner>
py::array_t<T> view(const T* data, std::vector<py::ssize_t> shape, std::shared_ptr<Owner> owner) {
  auto* keep = new std::shared_ptr<Owner>(std::move(owner));
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Owner>*>(p); });
  return py::array_t<T>(std::move(shape), data, base);
}

// The pipeline keywords shared by verity.Pipeline and verity.evaluate.
search::PipelineOptions pipeline_options(const std::string& stage1, const std::string& verifier, size_t candidates,
                                         const std::string& fusion, double rrf_k, double dense_weight,
                                         const std::string& combine, double verifier_weight, double penalty_beta,
                                         double penalty_tau, std::optional<double> reject_below);

// JSON values as Python objects: objects -> dict, arrays -> list, numbers ->
// int/float, null -> None.
py::object to_python(const nlohmann::json& j);

}  // namespace verity::python
