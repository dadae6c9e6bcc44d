# lit configuration for skyline-check's end-to-end tests: each test runs the
# real binary on a small program and checks its output with FileCheck.
import os
import subprocess

import lit.formats

config.name = "skyline-check"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cpp", ".test"]
config.excludes = ["Inputs", "check-backoff.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.skyline_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.skyline_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["LC_ALL"] = "C"
# Tests share one runtime cache (docs/user-guide.md) in the build tree, not
# the user's: the runtime compiles once for the whole suite.
config.environment["SKYLINE_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                       "runtime-cache")

mock = os.path.join(config.test_source_root, "Inputs", "mock")
config.substitutions.append(("%skyline-check", os.path.join(config.skyline_tools_dir, "skyline-check")))
config.substitutions.append(("%skyline-measure", os.path.join(config.skyline_tools_dir, "skyline-measure")))
config.substitutions.append(("%mock-flags", "-std=c++17 -isystem " + mock))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%src_root", config.skyline_src_root))
config.substitutions.append(("%obj_root", config.skyline_obj_root))
config.substitutions.append(("%torch_dir", config.torch_dir))
config.substitutions.append(("%python", config.python or "python3"))
config.substitutions.append(("%expect-exit", (config.python or "python3") + " " +
                             os.path.join(config.test_source_root, "Inputs", "expect-exit.py")))
torch_flags = " ".join("-isystem " + d for d in config.torch_include_dirs.split(";") if d)
config.substitutions.append(("%torch-flags", "-std=c++17 " + torch_flags))

if config.examples_built and config.torch_dir:
    config.available_features.add("torch")
# Tests of an effect that needs a CPU of its own for a second thread (the
# loader workers experiment) run on two of this process's CPUs.
usable_cpus = sorted(os.sched_getaffinity(0))
if len(usable_cpus) >= 2:
    config.available_features.add("two-cpus")
    config.substitutions.append(
        ("%on-two-cpus", "taskset -c %d,%d" % (usable_cpus[0], usable_cpus[1])))
if os.path.exists("/usr/bin/chromium"):
    config.available_features.add("chromium")
if os.path.exists("/usr/bin/clang-apply-replacements-19"):
    config.available_features.add("clang-apply-replacements")

# --launcher=slurm's tests (test/lit/slurm) need a Slurm: utils/slurm-local
# starts a one-node cluster on this machine where it can (as root, with
# Debian's packages), and says why it cannot otherwise; those tests then
# report as unsupported. They share the cluster, one at a time.
lit_config.parallelism_groups["slurm"] = 1
lit_config.parallelism_groups["timing"] = 1
slurm_local = os.path.join(config.skyline_src_root, "utils", "slurm-local")
started = subprocess.run([slurm_local, "start"], capture_output=True, text=True)
if started.returncode == 0:
    config.available_features.add("slurm")
    conf = subprocess.run([slurm_local, "env"], capture_output=True, text=True).stdout
    config.environment["SLURM_CONF"] = conf.strip().split("=", 1)[1]
else:
    lit_config.note("test/lit/slurm is skipped: " + started.stderr.strip())
