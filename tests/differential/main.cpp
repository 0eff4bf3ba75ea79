// graphc-difftest: runs the differential test on many random graphs.
//
//   graphc-difftest [--count N] [--seed S] [--f32] [--cpu] [--save DIR]
//
// --cpu also runs every optimised graph on the cpu backend against the
// reference, with results that update inputs in place.
//
// Prints each failing seed with its graph (saved as DIR/seed-S.graph when
// --save is given) and ends with "N passed, M failed".
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "DiffTest.h"

int main(int argc, char** argv) {
  uint64_t count = 1000, seed = 1;
  graphc::difftest::RandomGraphOptions options;
  std::string saveDir;
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg == "--count" && k + 1 < argc)
      count = std::strtoull(argv[++k], nullptr, 10);
    else if (arg == "--seed" && k + 1 < argc)
      seed = std::strtoull(argv[++k], nullptr, 10);
    else if (arg == "--save" && k + 1 < argc)
      saveDir = argv[++k];
    else if (arg == "--f32")
      options.useF32 = true;
    else if (arg == "--cpu")
      options.cpuBackend = options.inputUpdates = true;
    else {
      std::fprintf(stderr, "usage: graphc-difftest [--count N] [--seed S] [--f32] [--cpu] [--save DIR]\n");
      return 2;
    }
  }
  uint64_t failed = 0;
  for (uint64_t s = seed; s < seed + count; ++s) {
    if (auto report = graphc::difftest::checkSeed(s, options)) {
      ++failed;
      std::printf("FAIL %s\n", report->c_str());
      if (!saveDir.empty()) {
        std::filesystem::create_directories(saveDir);
        std::ofstream(saveDir + "/seed-" + std::to_string(s) + ".graph") << *report;
      }
    }
  }
  std::printf("%llu passed, %llu failed\n", static_cast<unsigned long long>(count - failed),
              static_cast<unsigned long long>(failed));
  return failed ? 1 : 0;
}
