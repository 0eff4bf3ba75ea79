// graphc: the command-line driver, modelled on mlir-opt and hlo-opt.
//
//   graphc run FILE [--device cpu|reference|cuda] [--arch sm_90] [--matmul generated|cublaslt] [--input NAME=PATH.npy|NAME=rand[:SEED]]...
//                   [--dim SYM=N]... [--save-outputs DIR] [--print-outputs] [--time-passes]
//   graphc opt FILE [--passes=a,b] [--print-ir-after-all] [--print-ir-after=PASS]
//                   [--print-ir-after-change] [--verify-each] [--split-input-file] [--verify-diagnostics]
//   graphc compile FILE --device cpu|cuda [--arch sm_90] [--emit=graph|kernels|dot|llvm|asm|cuda|ptx]
//                       [--dump-dir DIR] [--time-passes] [-o OUT]
//   graphc bench FILE [--device cpu|reference|cuda] [--arch ...] [--matmul ...] [--input ...]... [--dim SYM=N]... [--iters N]
//   graphc import MODEL.onnx [--input NAME=PATH]... [-o OUT.graph]
//   graphc --list-passes
//
// FILE is a .graph file or an ONNX model (.onnx); --input files are .npy or
// ONNX TensorProto (.pb).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>

#include "tools/graphc/Commands.h"

namespace {

/// What run and bench share: the file, the device and how to compile for
/// it, and the inputs.
void addExecutionOptions(CLI::App* cmd, graphc::tools::RunOptions& options) {
  cmd->add_option("file", options.file, "A .graph file or an ONNX model")->required();
  cmd->add_option("--device", options.device, "Where to run")
      ->check(CLI::IsMember({"cpu", "reference", "cuda"}))
      ->default_val("cpu");
  cmd->add_option("--arch", options.arch, "cuda: the architecture to compile for (default: the device's)")
      ->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}));
  cmd->add_option("--matmul", options.matmul, "cuda: GEMM + epilogue by the generated kernel or by cuBLASLt")
      ->check(CLI::IsMember({"generated", "cublaslt"}))
      ->default_val("generated");
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

  RunOptions run;
  CLI::App* runCmd = app.add_subcommand("run", "Run a graph and report its outputs");
  addExecutionOptions(runCmd, run);
  runCmd->add_option("--save-outputs", run.saveOutputs, "Write DIR/output0.npy, DIR/output1.npy, ...");
  runCmd->add_flag("--print-outputs", run.printOutputs, "Print the output values");
  runCmd->add_flag("--time-passes", run.timePasses, "Print pass and kernel compile times (to stderr)");

  RunOptions benchRun;
  CLI::App* benchCmd = app.add_subcommand("bench", "Time a compiled graph's runs (median, after a warm-up)");
  addExecutionOptions(benchCmd, benchRun);
  benchCmd->add_option("--iters", benchRun.benchIters, "Timed runs")->default_val(100)->check(CLI::Range(1, 1000000));

  OptOptions opt;
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
  optCmd->add_flag("--split-input-file", opt.splitInputFile, "Treat each '// -----' chunk as its own file");
  optCmd->add_flag("--verify-diagnostics", opt.verifyDiagnostics, "Check diagnostics against expected-* comments");

  CompileOptions compile;
  CLI::App* compileCmd = app.add_subcommand("compile", "Optimise a graph and emit what the backends get");
  compileCmd->add_option("file", compile.file, "A .graph file or an ONNX model")->required();
  compileCmd->add_option("--device", compile.device, "Target")->check(CLI::IsMember({"cpu", "cuda"}))->required();
  compileCmd->add_option("--arch", compile.arch, "CUDA architecture for --emit=ptx (default: sm_90)")
      ->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}));
  compileCmd->add_option("--emit", compile.emit, "What to print")
      ->check(CLI::IsMember({"graph", "kernels", "dot", "llvm", "asm", "cuda", "ptx"}))
      ->default_val("graph");
  compileCmd->add_option("--dump-dir", compile.dumpDir,
                         "Write the IR after each pass, the kernels and their source under DIR (as GRAPHC_DEBUG_DIR)");
  compileCmd->add_flag("--time-passes", compile.timePasses, "Print pass and kernel compile times (to stderr)");
  compileCmd->add_option("-o", compile.output, "Output file (default: standard output)");

  ImportOptions import;
  CLI::App* importCmd = app.add_subcommand("import", "Import an ONNX model and print it as .graph text");
  importCmd->add_option("file", import.file, "An ONNX model (.onnx)")->required();
  importCmd->add_option("--input", import.inputs, "NAME=PATH (.npy or .pb): a value to specialise an input on")
      ->allow_extra_args(false);
  importCmd->add_option("-o", import.output, "Output file (default: standard output)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
  opt.passesGiven = optCmd->count("--passes") > 0;
  try {
    if (listPassesFlag) return listPasses();
    if (runCmd->parsed()) return runCommand(run);
    if (benchCmd->parsed()) return runCommand(benchRun);
    if (optCmd->parsed()) return optCommand(opt);
    if (compileCmd->parsed()) return compileCommand(compile);
    if (importCmd->parsed()) return importCommand(import);
  } catch (const std::bad_alloc&) {
    std::fputs("graphc: error: out of memory\n", stderr);
    return 1;
  }
  std::fputs(app.help().c_str(), stderr);
  return 2;
}
