// Reading ONNX files (frontend/onnx_file.h), on the files tests/fixtures/make_onnx_file_fixtures.py
// writes with the onnx package: every way a tensor's bytes are stored gives the arrays NumPy
// saved beside them, and every malformed file is one model error naming the file and what is
// wrong, external data that leaves the model's folder included.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "frontend/onnx_file.h"
#include "ir/diagnostic.h"
#include "tensor/npy.h"

namespace gxc {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GXC_FIXTURE_DIR) + "/onnx/" + name;
}

std::map<std::string, Tensor> initializers(const std::string& file) {
  OnnxModel model = readOnnxModel(fixture(file));
  EXPECT_EQ(model.opset, 17);
  std::map<std::string, Tensor> tensors;
  for (const onnx::TensorProto& t : model.proto.graph().initializer())
    tensors[t.name()] = readOnnxTensor(t, model, "initializer '" + t.name() + "'");
  return tensors;
}

void expectSameBytes(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.nbytes()), 0) << what;
}

// The model error a file gives, or "" if it reads.
std::string errorOf(const std::string& path) {
  try {
    OnnxModel model = readOnnxModel(path);
    for (const onnx::TensorProto& t : model.proto.graph().initializer())
      readOnnxTensor(t, model, "initializer '" + t.name() + "'");
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Model);
    EXPECT_EQ(error.loc().file, path);
    return error.message();
  }
  return "";
}

TEST(OnnxFileTest, RawDataAndTypedFieldsGiveNumPysArrays) {
  for (const char* file : {"raw_data.onnx", "typed_fields.onnx"}) {
    std::map<std::string, Tensor> tensors = initializers(file);
    ASSERT_EQ(tensors.size(), 5u) << file;
    for (const char* name : {"w", "ids", "half", "mask", "dbl"})
      expectSameBytes(tensors.at(name), readNpy(fixture(std::string("expected_") + name + ".npy")),
                      std::string(file) + ": " + name);
    // i64 beyond 2^53 and an f64 f32 would round: copied, never converted through float.
    EXPECT_EQ(tensors.at("ids").as<int64_t>()[3], int64_t{1} << 40);
    EXPECT_EQ(tensors.at("dbl").as<double>()[0], 1.0 + std::ldexp(1.0, -40));
  }
}

TEST(OnnxFileTest, ExternalDataIsReadFromBesideTheModel) {
  std::map<std::string, Tensor> tensors = initializers("external.onnx");
  expectSameBytes(tensors.at("w"), readNpy(fixture("expected_w.npy")), "w");
  expectSameBytes(tensors.at("ids"), readNpy(fixture("expected_ids.npy")), "ids");
}

TEST(OnnxFileTest, MalformedFilesAreOneModelErrorEach) {
  struct Case {
    const char* file;
    const char* message;
  };
  for (const Case& c : {
           Case{"not_a_model.onnx", "does not parse as an onnx.ModelProto"},
           Case{"uint8.onnx", "initializer 'u8': UINT8 tensors are not supported"},
           Case{"raw_data_short.onnx", "raw_data holds 44 bytes, its dtype and shape need 48"},
           Case{"external_dotdot.onnx", "'../outside.bin' leaves the model's folder"},
           Case{"external_absolute.onnx", "'/etc/passwd' must be a path relative"},
           Case{"external_short.onnx", "ends before the 48 bytes at offset 104 (it holds 112"},
           Case{"external_wrong_length.onnx", "external data length 52 is not the 48 bytes"},
           Case{"missing.onnx", "cannot open"},
           Case{"truncated.onnx", "does not parse as an onnx.ModelProto"},
           Case{"opset99.onnx", "opset 99 is newer than 28"},
           Case{"typed_fields_short.onnx",
                "initializer 'w': float_data holds 11 values for 12 elements"},
           Case{"negative_dim.onnx", "initializer 'neg': negative dimension -1"},
           Case{"rank1000.onnx", "initializer 'rank': rank 1000 is over 32"},
           Case{"dims_overflow.onnx",
                "initializer 'big': shape [1099511627776,1099511627776] has more elements"},
           // Refused from the data's size, before 256 TiB are allocated: an allocation first
           // would throw std::bad_alloc (or abort under ASan), failing the test.
           Case{"dims_absurd.onnx",
                "initializer 'huge': raw_data holds 4 bytes, its dtype and "
                "shape need 281474976710656"},
           Case{"dims_absurd_typed.onnx", "int64_data holds 2 values for 70368744177664 elements"},
           Case{"dims_absurd_external.onnx",
                "'data/weights.bin' ends before the "
                "281474976710656 bytes at offset 0 (it holds 112"},
           Case{"external_missing.onnx",
                "initializer 'w': external data file 'data/missing.bin' does not exist"},
           Case{"external_offset_beyond.onnx", "ends before the 48 bytes at offset 1048576"},
           Case{"external_offset_overflow.onnx",
                "ends before the 48 bytes at offset 18446744073709551615"},
       }) {
    std::string message = errorOf(fixture(c.file));
    EXPECT_NE(message.find(c.message), std::string::npos) << c.file << ": " << message;
  }
}

// Opsets from 7 on are read (opset11.onnx is one); older ones are refused.
TEST(OnnxFileTest, OpsetsOlderThanSevenAreRefused) {
  EXPECT_EQ(readOnnxModel(fixture("opset11.onnx")).opset, 11);
  onnx::ModelProto proto;
  proto.set_ir_version(3);
  onnx::OperatorSetIdProto* opset = proto.add_opset_import();
  opset->set_version(6);
  proto.mutable_graph()->set_name("old");
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gxc-opset6-" + std::to_string(std::random_device{}()) + ".onnx"))
                         .string();
  {
    std::ofstream out(path, std::ios::binary);
    proto.SerializeToOstream(&out);
  }
  std::string message = errorOf(path);
  EXPECT_NE(message.find("opset 6 is older than 7"), std::string::npos) << message;
  std::filesystem::remove(path);
}

// ONNX has empty tensors (an exporter's unused Resize roi): the reader reads them as they are.
TEST(OnnxFileTest, AZeroDimIsAnEmptyTensor) {
  std::map<std::string, Tensor> tensors = initializers("zero_dim.onnx");
  const Tensor& empty = tensors.at("empty");
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(empty.numel(), 0);
}

// The bytes of a file read as the file does (the fuzz target's entry point), and the same
// errors, located at the path given.
TEST(OnnxFileTest, BytesReadAsTheFile) {
  std::ifstream in(fixture("raw_data.onnx"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  OnnxModel model = readOnnxModelFromBytes(bytes, fixture("raw_data.onnx"));
  EXPECT_EQ(model.opset, 17);
  EXPECT_EQ(model.proto.graph().initializer_size(), 5);
  try {
    readOnnxModelFromBytes(bytes.substr(0, bytes.size() / 2), "cut.onnx");
    ADD_FAILURE() << "half a model read";
  } catch (const Error& error) {
    EXPECT_EQ(error.loc().file, "cut.onnx");
    EXPECT_NE(error.message().find("does not parse"), std::string::npos) << error.message();
  }
}

// A link inside the model's folder that points out of it is refused as `..` is.
TEST(OnnxFileTest, ExternalDataThroughALinkOutOfTheFolderIsRefused) {
  namespace fs = std::filesystem;
  fs::path root =
      fs::temp_directory_path() / ("gxc-onnx-" + std::to_string(std::random_device{}()));
  fs::create_directories(root / "model" / "data");
  fs::copy_file(fixture("external.onnx"), root / "model" / "external.onnx");
  fs::copy_file(fixture("data/weights.bin"), root / "secret.bin");
  fs::create_symlink(root / "secret.bin", root / "model" / "data" / "weights.bin");
  std::string message = errorOf((root / "model" / "external.onnx").string());
  EXPECT_NE(message.find("leads out of the model's folder"), std::string::npos) << message;
  fs::remove_all(root);
}

}  // namespace
}  // namespace gxc
