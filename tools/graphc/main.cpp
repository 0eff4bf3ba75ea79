// graphc: the command-line driver, modelled on mlir-opt and hlo-opt.
//
//   graphc run FILE [--device cpu|reference|cuda] [--passes a,b] [--arch sm_90] [--matmul generated|cublaslt]
//                   [--input NAME=PATH.npy|NAME=rand[:SEED]]... [--dim SYM=N]... [--save-outputs DIR]
//                   [--print-outputs] [--time-passes]
//   graphc opt FILE [--passes=a,b] [--print-ir-after-all] [--print-ir-after=PASS]
//                   [--print-ir-after-change] [--verify-each] [--split-input-file] [--verify-diagnostics]
//   graphc compile FILE [--emit=graph|kernels|dot|llvm|asm|cuda|ptx] [--device cpu|cuda] [--passes a,b]
//                       [--arch sm_90] [--dump-dir DIR] [--time-passes] [-o OUT]
//   graphc bench FILE [--device cpu|reference|cuda] [--arch ...] [--matmul ...] [--input ...]...
//                     [--dim SYM=N]... [--iters N]
//   graphc import MODEL.onnx [--input NAME=PATH]... [-o OUT.graph]
//   graphc export FILE -o OUT.gcpkg [--device cpu|cuda] [--passes a,b] [--arch sm_90] [--matmul ...]
//                      [--weights f32|f16|bf16|mxfp8|mxfp6|mxfp4] [--dim SYM=N|SYM=?]...
//   graphc run OUT.gcpkg [--input ...]... [--dim SYM=N]...   (the package, loaded without compiling)
//   graphc cache [--prune | --clear]
//   graphc --list-passes
//
// FILE is a .graph file or an ONNX model (.onnx); --input files are .npy or
// ONNX TensorProto (.pb).
#include <cstdio>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/graphc/Commands.h"

namespace {

const std::map<std::string, graphc::Device> kDevices = {
    {"reference", graphc::Device::Reference}, {"cpu", graphc::Device::Cpu}, {"cuda", graphc::Device::Cuda}};
const std::map<std::string, graphc::MatmulImpl> kMatmuls = {{"generated", graphc::MatmulImpl::Generated},
                                                            {"cublaslt", graphc::MatmulImpl::CublasLt}};
const std::vector<std::string> kArchs = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};

/// How run, bench and compile compile: into the API's CompileOptions.
void addCompileOptions(CLI::App* cmd, graphc::CompileOptions& options) {
  cmd->add_option("--device", options.device, "Where to run (reference, cpu, cuda)")
      ->transform(CLI::CheckedTransformer(kDevices))
      ->default_str("cpu");
  cmd->add_option("--passes", options.passes, "Comma-separated passes instead of the default pipeline");
  cmd->add_option("--arch", options.arch,
                  "cuda: the architecture to compile for (default: the device's; sm_90 for --emit=ptx)")
      ->check(CLI::IsMember(kArchs));
  cmd->add_option("--matmul", options.matmul, "cuda: GEMM + epilogue by the generated kernel or by cuBLASLt")
      ->transform(CLI::CheckedTransformer(kMatmuls))
      ->default_str("generated");
}

/// What run and bench share: the file, how to compile it, and the inputs.
void addExecutionOptions(CLI::App* cmd, graphc::tools::RunCommandOptions& options) {
  cmd->add_option("file", options.file, "A .graph file or an ONNX model")->required();
  addCompileOptions(cmd, options.compile);
  // Repeatable options take one value per use, so they never swallow FILE.
  cmd->add_option("--input", options.inputs, "NAME=PATH (.npy or ONNX .pb) or NAME=rand[:SEED] for each parameter")
      ->allow_extra_args(false);
  cmd->add_option("--dim", options.dims, "SYM=N: the size of a symbolic dim for rand inputs")->allow_extra_args(false);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graphc::tools;
  CLI::App app{"graphc: a small tensor-graph compiler"};
  app.require_subcommand(0, 1);
  bool listPassesFlag = false;
  app.add_flag("--list-passes", listPassesFlag, "List the registered passes and exit");

  RunCommandOptions run;
  CLI::App* runCmd = app.add_subcommand("run", "Run a graph and report its outputs");
  addExecutionOptions(runCmd, run);
  runCmd->add_option("--save-outputs", run.saveOutputs, "Write DIR/output0.npy, DIR/output1.npy, ...");
  runCmd->add_flag("--print-outputs", run.printOutputs, "Print the output values");
  runCmd->add_flag("--time-passes", run.timePasses, "Print pass and kernel compile times (to stderr)");

  RunCommandOptions benchRun;
  CLI::App* benchCmd = app.add_subcommand("bench", "Time a compiled graph's runs (median, after a warm-up)");
  addExecutionOptions(benchCmd, benchRun);
  benchCmd->add_option("--iters", benchRun.benchIters, "Timed runs")->default_val(100)->check(CLI::Range(1, 1000000));
  benchCmd->add_flag("--profile", benchRun.benchProfile,
                     "Then as many runs again, timing each step: the time per step and kernel (cpu)");

  OptCommandOptions opt;
  CLI::App* optCmd = app.add_subcommand("opt", "Run passes over a graph and print the result");
  optCmd->add_option("file", opt.file, "A .graph file, an ONNX model, or - for standard input")->required();
  optCmd->add_option("-o", opt.output, "Output file (default: standard output)");
  optCmd->add_option("--passes", opt.passes, "Comma-separated passes (default: the default pipeline; empty: none)")
      ->expected(0, 1);
  optCmd->add_flag("--print-ir-after-all", opt.printAfterAll, "Print the IR after every pass (to stderr)");
  optCmd->add_option("--print-ir-after", opt.printAfter, "Print the IR after the named pass (to stderr)")
      ->allow_extra_args(false);
  optCmd->add_flag("--print-ir-after-change", opt.printAfterChange, "Print the IR after each pass that changed it");
  optCmd->add_flag("--verify-each,!--no-verify-each", opt.verifyEach, "Verify after each pass that changed the IR")
      ->default_val(true);
  optCmd->add_flag("--time-passes", opt.timePasses, "Print each pass's wall time (to stderr)");
  optCmd->add_flag("--print-weights", opt.printWeights,
                   "Print constants above 16 elements in full in the --print-ir-after* dumps (elided by default)");
  optCmd->add_flag("--split-input-file", opt.splitInputFile, "Treat each '// -----' chunk as its own file");
  optCmd->add_flag("--verify-diagnostics", opt.verifyDiagnostics, "Check diagnostics against expected-* comments");

  CompileCommandOptions compile;
  CLI::App* compileCmd = app.add_subcommand("compile", "Optimise a graph and emit what the backends get");
  compileCmd->add_option("file", compile.file, "A .graph file or an ONNX model")->required();
  addCompileOptions(compileCmd, compile.compile);
  compileCmd->add_option("--emit", compile.emit, "What to print")
      ->check(CLI::IsMember({"graph", "kernels", "dot", "llvm", "asm", "cuda", "ptx"}))
      ->default_val("graph");
  compileCmd->add_option("--dump-dir", compile.compile.dumpDir,
                         "Write the IR after each pass, the kernels and their source under DIR (as GRAPHC_DEBUG_DIR)");
  compileCmd->add_flag("--time-passes", compile.timePasses, "Print pass and kernel compile times (to stderr)");
  compileCmd->add_flag("--print-weights", compile.compile.printWeights,
                       "Print constants above 16 elements in full with --emit=graph and in dumps (elided by default)");
  compileCmd->add_option("-o", compile.output, "Output file (default: standard output)");

  ImportCommandOptions import;
  ExportCommandOptions exportOptions;
  CLI::App* exportCmd = app.add_subcommand("export", "Compile a model ahead of time into one package file (.gcpkg)");
  exportCmd->add_option("file", exportOptions.file, "A .graph file or an ONNX model")->required();
  exportCmd->add_option("-o", exportOptions.output, "The package to write (.gcpkg)")->required();
  addCompileOptions(exportCmd, exportOptions.compile);
  exportCmd
      ->add_option("--weights", exportOptions.exportOptions.weights,
                   "How to store linear and convolution weights (cpu): f32, f16, bf16, mxfp8, mxfp6, mxfp4 (or "
                   "mxfp8_e5m2, mxfp6_e3m2)")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "mxfp8", "mxfp6", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2",
                             "mxfp6_e2m3", "mxfp4_e2m1"}))
      ->default_str("f32");
  exportCmd
      ->add_option("--dim", exportOptions.dims,
                   "SYM=N: compile with the symbolic size SYM pinned to N; SYM=? keeps it symbolic (the default)")
      ->allow_extra_args(false);

  CLI::App* importCmd = app.add_subcommand("import", "Import an ONNX model and print it as .graph text");
  importCmd->add_option("file", import.file, "An ONNX model (.onnx)")->required();
  importCmd->add_option("--input", import.inputs, "NAME=PATH (.npy or .pb): a value to specialise an input on")
      ->allow_extra_args(false);
  importCmd->add_option("-o", import.output, "Output file (default: standard output)");

  CacheCommandOptions cache;
  CLI::App* cacheCmd = app.add_subcommand("cache", "Show the on-disk cache of compiled code, or prune or clear it");
  cacheCmd->add_flag("--prune", cache.prune, "Remove the least recently used entries beyond GRAPHC_CACHE_MAX_SIZE");
  cacheCmd->add_flag("--clear", cache.clear, "Remove every entry");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
  opt.passesGiven = optCmd->count("--passes") > 0;
  compile.deviceGiven = compileCmd->count("--device") > 0;
  try {
    if (listPassesFlag) return listPasses();
    if (runCmd->parsed()) return runCommand(run);
    if (benchCmd->parsed()) return runCommand(benchRun);
    if (optCmd->parsed()) return optCommand(opt);
    if (compileCmd->parsed()) return compileCommand(compile);
    if (importCmd->parsed()) return importCommand(import);
    if (exportCmd->parsed()) return exportCommand(exportOptions);
    if (cacheCmd->parsed()) return cacheCommand(cache);
  } catch (const std::bad_alloc&) {
    std::fputs("graphc: error: out of memory\n", stderr);
    return 1;
  }
  std::fputs(app.help().c_str(), stderr);
  return 2;
}
