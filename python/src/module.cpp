// The verity._verity extension module: errors, logging and the submodule
// bindings (encode.cpp, search.cpp, eval.cpp). The Python package
// (python/verity/__init__.py) re-exports it.
#include <cmath>
#include <new>

#include "common.hpp"

namespace verity::python {

void bind_encode(py::module_& m);
void bind_search(py::module_& m);
void bind_eval(py::module_& m);
// The verified semantic cache (verity.Cache) binds here once src/cache is in
// the library: void bind_cache(py::module_& m);

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [key, v] : j.items()) out[py::str(key)] = to_python(v);
      return out;
    }
    default:
      throw Error(cat("cannot convert JSON ", j.type_name(), " to Python"));
  }
}

namespace {

// Exception classes created here so verity.ConfigError is also a ValueError
// (what Python code expects from a bad argument).
PyObject* new_error(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  PyObject* type = PyErr_NewExceptionWithDoc(cat("verity.", name).c_str(), doc, bases, nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

PyObject* g_error = nullptr;
PyObject* g_config_error = nullptr;
PyObject* g_format_error = nullptr;

void register_errors(py::module_& m) {
  g_error = new_error(m, "Error", PyExc_RuntimeError, "Base of every verity error; the message is the library's.");
  py::tuple config_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError));
  g_config_error = new_error(m, "ConfigError", config_bases.ptr(),
                             "Bad option values, unknown factory strings, inconsistent settings.");
  g_format_error = new_error(m, "FormatError", g_error, "Malformed or damaged input: files, JSON lines, on-disk formats.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(g_config_error, e.what());
    } catch (const FormatError& e) {
      PyErr_SetString(g_format_error, e.what());
    } catch (const std::exception& e) {  // verity::Error, Unsupported, and anything from below the library
      PyErr_SetString(g_error, e.what());
    }
  });
}

}  // namespace
}  // namespace verity::python

PYBIND11_MODULE(_verity, m) {
  namespace py = pybind11;
  using namespace verity::python;
  m.doc() = "verity: retrieve fast, verify identity (C++ core; see the verity package).";
  register_errors(m);
  m.def("set_quiet", &verity::set_quiet, py::arg("quiet") = true,
        "Silences the library's progress and log lines on stderr (True) or restores them.");
  bind_encode(m);
  bind_search(m);
  bind_eval(m);
}
