// Fuzz target for the ONNX reader (frontend/onnx_file.h): the bytes are read as a model file,
// then every initializer and every Constant node's tensor is read. The model is placed in the
// ONNX fixtures' folder (GXC_FUZZ_ONNX_DIR), so external data the seeds name (data/weights.bin)
// is found and the external reads are fuzzed too. See fuzz/fuzz_check.h for what is checked.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/onnx_file.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gxc;
  static const std::string path = std::string(GXC_FUZZ_ONNX_DIR) + "/fuzzed.onnx";
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expectReadOrRefusal(path, [&] {
    OnnxModel model = readOnnxModelFromBytes(bytes, path);
    // Each tensor on its own: one refused tensor does not hide the reading of the next.
    for (const onnx::TensorProto& tensor : model.proto.graph().initializer())
      fuzz::expectReadOrRefusal(path, [&] { readOnnxTensor(tensor, model, "initializer"); });
    for (const onnx::NodeProto& node : model.proto.graph().node())
      if (node.op_type() == "Constant")
        for (const onnx::AttributeProto& attribute : node.attribute())
          if (attribute.has_t())
            fuzz::expectReadOrRefusal(path,
                                      [&] { readOnnxTensor(attribute.t(), model, "constant"); });
  });
  return 0;
}
