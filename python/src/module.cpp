// gxc's Python module, _gxc: bindings only (docs/python.md). Each entry is a C++ function or
// class the command line also uses: the options, their checks and defaults are CompileOptions'
// and compileModel's (tools/driver/compile_session.h), the runs tools/driver/executable.h's,
// the messages the CLI's. What is here is only the crossing: tensors by DLPack, errors as
// exceptions, the GIL released while gxc works.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "ir/printer.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/executable.h"
#include "tools/driver/version.h"

namespace nb = nanobind;

namespace gxc {
namespace {

// The exception classes of gxc/_errors.py, raised with the CLI's one line and the location.
void raiseAsPython(const Error& error) {
  const char* names[] = {"Error", "ModelError", "UsageError", "DeviceError"};
  nb::object classes = nb::module_::import_("gxc._errors");
  nb::object type = classes.attr(names[error.exitStatus()]);
  const SourceLoc& loc = error.loc();
  nb::object file = loc.file.empty() ? nb::none() : nb::cast(loc.file);
  nb::object line = loc.line > 0 ? nb::cast(loc.line) : nb::none();
  nb::object column = loc.col > 0 ? nb::cast(loc.col) : nb::none();
  nb::object layer = loc.nodeName.empty() ? nb::none() : nb::cast(loc.nodeName);
  nb::object raised = type(formatError(error), file, line, column, layer);
  PyErr_SetObject(type.ptr(), raised.ptr());
}

void translateErrors(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Error& error) {
    raiseAsPython(error);
  } catch (const InternalError& error) {
    PyErr_SetString(PyExc_RuntimeError, (std::string("gxc: ") + error.what()).c_str());
  } catch (const std::bad_alloc&) {
    raiseAsPython(Error(ErrorKind::Runtime, {}, "out of host memory"));
  }
}

// gxc's dtypes as DLPack spells them, both ways.
struct DlpackSpelling {
  DType dtype;
  nb::dlpack::dtype_code code;
  uint8_t bits;
};
constexpr DlpackSpelling kDlpackSpellings[] = {{DType::F32, nb::dlpack::dtype_code::Float, 32},
                                               {DType::F64, nb::dlpack::dtype_code::Float, 64},
                                               {DType::F16, nb::dlpack::dtype_code::Float, 16},
                                               {DType::BF16, nb::dlpack::dtype_code::Bfloat, 16},
                                               {DType::I32, nb::dlpack::dtype_code::Int, 32},
                                               {DType::I64, nb::dlpack::dtype_code::Int, 64},
                                               {DType::Bool, nb::dlpack::dtype_code::Bool, 8}};

std::optional<DType> dtypeOf(nb::dlpack::dtype dtype) {
  for (const DlpackSpelling& spelling : kDlpackSpellings)
    if (dtype.lanes == 1 && dtype.code == static_cast<uint8_t>(spelling.code) &&
        dtype.bits == spelling.bits)
      return spelling.dtype;
  return std::nullopt;
}

nb::dlpack::dtype dlpackOf(DType dtype) {
  for (const DlpackSpelling& spelling : kDlpackSpellings)
    if (spelling.dtype == dtype) return {static_cast<uint8_t>(spelling.code), spelling.bits, 1};
  GXC_CHECK(false, "no DLPack spelling of {}", dtypeName(dtype));
}

using AnyArray = nb::ndarray<nb::ro>;

// A caller's array as gxc reads it: a view of its memory where it lies on the host, row-major
// and contiguous (no copy); otherwise a contiguous copy made here, kept while the run reads it.
struct HeldInput {
  ConstTensorView view;
  std::unique_ptr<Tensor> copy;
};

HeldInput holdInput(const std::string& name, const AnyArray& array) {
  if (array.device_type() != nb::device::cpu::value)
    throw Error(ErrorKind::Usage, {},
                fmt::format("input '{}' is in GPU memory (DLPack device {}); pass a host tensor "
                            "(.cpu()): gxc copies it to the devices its plan chose",
                            name, array.device_type()));
  std::optional<DType> dtype = dtypeOf(array.dtype());
  if (!dtype)
    throw Error(ErrorKind::Model, {},
                fmt::format("input '{}' has an element type gxc has no dtype for (DLPack code "
                            "{}, {} bits); convert it to one of f32, f64, f16, bf16, i32, i64, "
                            "bool",
                            name, array.dtype().code, array.dtype().bits));
  Shape shape;
  for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(static_cast<int64_t>(array.shape(i)));
  const auto* data = static_cast<const std::byte*>(array.data());
  // Row-major contiguous, in elements; a size-1 dim's stride does not matter.
  bool contiguous = true;
  int64_t expected = 1;
  for (size_t i = array.ndim(); i-- > 0;) {
    if (shape[i] != 1 && array.stride(i) != expected) contiguous = false;
    expected *= shape[i];
  }
  HeldInput held;
  if (contiguous) {
    held.view = ConstTensorView(*dtype, shape, data);
    return held;
  }
  held.copy = std::make_unique<Tensor>(*dtype, shape);
  const size_t element = dtypeSize(*dtype);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < held.copy->numel(); ++flat) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i) offset += index[i] * array.stride(i);
    std::memcpy(held.copy->data() + flat * element, data + offset * element, element);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  held.view = held.copy->view();
  return held;
}

// An output as an array of `framework` ("numpy" or "torch") sharing the tensor's buffer,
// which lives as long as the array does.
nb::object arrayOf(Tensor tensor, const std::string& name, const std::string& framework) {
  if (framework == "numpy" && tensor.dtype() == DType::BF16)
    throw Error(ErrorKind::Usage, {},
                fmt::format("output '{}' is bf16, which NumPy has no dtype for; pass torch "
                            "tensors to get torch tensors back",
                            name));
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* held) noexcept { delete static_cast<Tensor*>(held); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  void* data = owned->data();
  if (framework == "torch")
    return nb::cast(nb::ndarray<nb::pytorch>(data, shape.size(), shape.data(), owner, nullptr,
                                             dlpackOf(owned->dtype())),
                    nb::rv_policy::reference);
  return nb::cast(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr,
                                         dlpackOf(owned->dtype())),
                  nb::rv_policy::reference);
}

// gxc.load: the model read and checked now, kept as the options that compile it.
struct LoadedModel {
  CompileOptions options;
  std::string name;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;  // name, type
};

LoadedModel loadModelFile(const std::string& path, const std::optional<std::string>& weights,
                          const std::vector<std::string>& dims) {
  LoadedModel loaded;
  loaded.options.modelPath = path;
  loaded.options.weightsPath = weights.value_or("");
  loaded.options.dims = dims;
  ModelOptions options;
  options.weightsPath = loaded.options.weightsPath;
  options.dims = parseDimOptions(dims);
  std::unique_ptr<Graph> graph = loadModel(path, options);
  loaded.name = graph->name();
  for (const Value* input : graph->inputs())
    loaded.inputs.emplace_back(input->name, input->type.withoutDevice());
  for (const GraphOutput& output : graph->outputs())
    loaded.outputs.emplace_back(output.name, output.value->type.withoutDevice());
  return loaded;
}

// Ctrl-C during a run. Python runs its signal handlers in the main thread, when it holds the
// GIL, which a run has released: so between the steps of a run on the host, once it has run
// for a while (never in a short run), the run takes the GIL and lets them run; when one raised
// (KeyboardInterrupt), the run stops (RunInterrupted) and the caller sees that exception.
constexpr auto kSignalCheckInterval = std::chrono::milliseconds(20);
thread_local std::chrono::steady_clock::time_point lastSignalCheck;

bool pythonSignalRaised() {
  auto now = std::chrono::steady_clock::now();
  if (now - lastSignalCheck < kSignalCheckInterval) return false;
  lastSignalCheck = now;
  nb::gil_scoped_acquire held;
  return PyErr_CheckSignals() != 0;
}

std::unique_ptr<Executable> compileLoaded(const LoadedModel& model,
                                          const std::optional<std::string>& devices,
                                          const std::optional<std::string>& simGpus,
                                          const std::optional<std::string>& placement,
                                          std::optional<int> microbatches, bool strict,
                                          const std::optional<std::string>& arch) {
  CompileOptions options = model.options;
  if (devices) options.devices = *devices;
  if (simGpus) options.simGpus = *simGpus;
  if (placement) options.placement = *placement;
  if (microbatches) options.microbatches = *microbatches;
  options.strict = strict;
  if (arch) options.arch = *arch;
  checkPlacementOptions(options, microbatches.has_value());
  nb::gil_scoped_release released;
  auto executable = std::make_unique<Executable>(std::move(options));
  executable->setInterruptCheck(pythonSignalRaised);
  return executable;
}

nb::dict runExecutable(Executable& executable, const std::map<std::string, AnyArray>& inputs,
                       const std::string& framework) {
  std::map<std::string, HeldInput> held;
  InputViews views;
  for (const auto& [name, array] : inputs) {
    HeldInput& input = held[name] = holdInput(name, array);
    views.emplace(name, input.view);
  }
  std::map<std::string, Tensor> outputs;
  try {
    nb::gil_scoped_release released;
    lastSignalCheck = std::chrono::steady_clock::now();
    outputs = executable.run(views);
  } catch (const RunInterrupted&) {
    throw nb::python_error();  // what the signal handler raised
  }
  nb::dict result;
  for (const std::string& name : executable.outputNames())
    result[name.c_str()] = arrayOf(std::move(outputs.at(name)), name, framework);
  return result;
}

}  // namespace
}  // namespace gxc

NB_MODULE(_gxc, m) {
  using namespace gxc;
  nb::register_exception_translator(translateErrors);
  m.def("version", &versionString, "gxc's version, as `gxc --version` prints it");

  nb::class_<LoadedModel>(m, "Model")
      .def_prop_ro("path", [](const LoadedModel& model) { return model.options.modelPath; })
      .def_ro("name", &LoadedModel::name)
      .def_ro("inputs", &LoadedModel::inputs)
      .def_ro("outputs", &LoadedModel::outputs);
  m.def("load", &loadModelFile, nb::arg("path"), nb::arg("weights").none(), nb::arg("dims"),
        nb::call_guard<nb::gil_scoped_release>());

  nb::class_<Executable>(m, "Executable")
      .def("run", &runExecutable, nb::arg("inputs"), nb::arg("framework"))
      .def_prop_ro("devices", &Executable::devices)
      .def_prop_ro("notes", &Executable::notes)
      .def("ir", &Executable::ir, nb::arg("after"), nb::call_guard<nb::gil_scoped_release>())
      .def("explain", &Executable::explain, nb::call_guard<nb::gil_scoped_release>())
      .def("plan", &Executable::plan)
      .def("report", [](const Executable& executable) { return executable.report().dump(); })
      .def("trace", &Executable::trace);
  m.def("compile", &compileLoaded, nb::arg("model"), nb::arg("devices").none(),
        nb::arg("sim_gpus").none(), nb::arg("placement").none(), nb::arg("microbatches").none(),
        nb::arg("strict"), nb::arg("arch").none());
  // The address gxc reads an input at: the caller's own memory where no copy was needed (a
  // test of the no-copy rule, docs/python.md).
  m.def("_input_address", [](const AnyArray& array) {
    HeldInput held = holdInput("x", array);
    return reinterpret_cast<uintptr_t>(held.view.data());
  });
}
