// .npy I/O: every dtype round-trips, files numpy wrote are read, malformed
// files give clear errors.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "ir/Diagnostics.h"
#include "runtime/Npy.h"

namespace graphc::runtime {
namespace {

std::string errorOf(const std::string& bytes) {
  try {
    parseNpy(bytes, "t.npy");
  } catch (const ir::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Npy, EveryDTypeRoundTrips) {
  for (ir::DType t : {ir::DType::F16, ir::DType::BF16, ir::DType::F32, ir::DType::F64, ir::DType::I8, ir::DType::I32,
                      ir::DType::I64, ir::DType::Bool}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {5}, {2, 3}, {0, 4}}) {
      Tensor x(t, shape);
      for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, static_cast<double>(i % 3) - 1.0);
      std::string bytes = serializeNpy(x);
      EXPECT_EQ((bytes.size() - x.nbytes()) % 64, 0u);  // data aligned as numpy aligns it
      Tensor y = parseNpy(bytes, "t.npy");
      EXPECT_TRUE(graphc::testing::allClose(y, x, {0, 0})) << ir::dtypeName(t);
    }
  }
}

TEST(Npy, ReadsAGoldenFileWrittenByNumpy) {
  Tensor t = readNpy(std::string(GRAPHC_SOURCE_DIR) + "/tests/golden/cases/add_f32.in1.npy");
  EXPECT_EQ(ir::toString(t.type()), "f32[4]");
  Tensor b = readNpy(std::string(GRAPHC_SOURCE_DIR) + "/tests/golden/cases/add_bf16.in0.npy");
  EXPECT_EQ(ir::toString(b.type()), "bf16[3, 4]");
}

TEST(Npy, MalformedFilesAreClearErrors) {
  Tensor x(ir::DType::F32, {2, 2});
  std::string good = serializeNpy(x);
  EXPECT_EQ(errorOf("hello"), "t.npy: not a .npy file (bad magic)");
  EXPECT_EQ(errorOf(good.substr(0, 20)), "t.npy: truncated header");
  EXPECT_EQ(errorOf(good.substr(0, good.size() - 1)), "t.npy: data holds 15 bytes but shape (2, 2) of <f4 needs 16");
  std::string complexDescr = good;
  complexDescr.replace(complexDescr.find("<f4"), 3, "<c8");
  EXPECT_NE(errorOf(complexDescr).find("unsupported dtype '<c8'"), std::string::npos);
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(errorOf(fortran).find("Fortran-ordered"), std::string::npos);
  std::string badShape = good;
  badShape.replace(badShape.find("(2, 2)"), 6, "(2, x)");
  EXPECT_NE(errorOf(badShape).find("bad shape entry"), std::string::npos);
  std::string version = good;
  version[6] = 9;
  EXPECT_EQ(errorOf(version), "t.npy: unsupported .npy format version 9");
  EXPECT_THROW(readNpy("/nonexistent/x.npy"), ir::Error);
}

}  // namespace
}  // namespace graphc::runtime
