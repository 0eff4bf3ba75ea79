# lit configuration for graphc's .graph tests (RUN lines with FileCheck).
import os

import lit.formats

config.name = "graphc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".graph"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.graphc_bin_dir), "tests", "lit")
config.excludes = ["Inputs"]

config.environment["PATH"] = os.pathsep.join(
    [config.graphc_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%graphc", os.path.join(config.graphc_bin_dir, "graphc")))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%examples", os.path.join(config.graphc_src_root, "examples")))
# ONNX's backend test data (Debian's libonnx-testdata): models for tests/lit/onnx.
config.substitutions.append(("%onnxdata", "/usr/share/libonnx-testdata/data"))

# A CUDA device (tests of the no-device path are UNSUPPORTED where one is).
import shutil
import subprocess
smi = shutil.which("nvidia-smi")
if smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0:
    config.available_features.add("cuda-device")
