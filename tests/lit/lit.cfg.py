# lit configuration: tests/lit/<pass-name>.gxir for passes, tests/lit/model-errors/*.yaml for
# malformed models, tests/lit/cli/* for the command lines. Run through ctest. RUN lines
# call gxc, gxc-opt, FileCheck and not by name: the build folder leads PATH.
import os
import subprocess
import sys

import lit.formats

config.name = "gxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".gxir", ".yaml", ".test"]
config.excludes = ["Inputs", "tools", "lit.cfg.py", "lit.site.cfg.py", "expect_exit.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gxc_binary_dir, "tests", "lit")

config.substitutions.append(
    ("%expect-exit", f"{sys.executable} {os.path.join(config.test_source_root, 'expect_exit.py')}"))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%tools", os.path.join(config.test_source_root, "tools")))
config.substitutions.append(("%models", os.path.join(config.gxc_source_dir, "models")))
config.substitutions.append(("%source", config.gxc_source_dir))
# The engine behind the gxc command (tools/gxc_launcher.cpp).
config.substitutions.append(("%libexec", os.path.join(config.gxc_binary_dir, "libexec")))
config.substitutions.append(
    ("%fixtures", os.path.join(config.gxc_source_dir, "tests", "fixtures", "models")))
config.environment["PATH"] = os.pathsep.join(
    [config.gxc_binary_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# One kernel cache for the whole suite (GXC_TEST_KERNEL_CACHE, in the build tree unless the
# build names another): host builds of generated kernels are shared between tests and never
# written to the user's cache. A test of the cache itself sets its own GXC_CACHE_DIR.
config.environment["GXC_CACHE_DIR"] = config.gxc_kernel_cache
# The IR verifier after every pass, not only after the last (passes/pass_manager.h).
config.environment["GXC_VERIFY_EACH_PASS"] = "1"

# `REQUIRES: cuda` / `UNSUPPORTED: cuda`: tests of a gxc built with or without the CUDA toolkit.
# `REQUIRES: ptxas`: tests that assemble PTX; lit reports them UNSUPPORTED (a visible skip)
# in builds without the toolkit.
if config.gxc_have_cuda:
    config.available_features.add("cuda")
if config.gxc_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.gxc_ptxas))
# `REQUIRES: gpu`: tests that run on real GPUs; `UNSUPPORTED: gpu` for those that expect none.
# gxc itself says whether it finds one.
if config.gxc_have_cuda:
    devices = subprocess.run([os.path.join(config.gxc_binary_dir, "gxc"), "devices"],
                             capture_output=True, text=True)
    if devices.returncode == 0 and "no GPU found" not in devices.stdout:
        config.available_features.add("gpu")
