"""Working without a GPU: device profiles, and plans built offline for a GPU you do not have here.

cuDNN (>= 9.8) describes a GPU as JSON (a DEVICEPROP descriptor) and accepts that JSON in place of the
GPU: heuristics, engines and plans then work on a machine with no GPU at all. A ``DeviceProfile`` is that
JSON plus the cuDNN version that wrote it (profiles load only into that cuDNN version).

On a GPU machine this also captures the local GPU's profile and loads the offline-built plan onto a handle.

    python examples/offline.py
"""
import pathlib
import sys
import tempfile

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available
from cudnn_backend.runtime import profiles

from conv_bias_relu import graph_api


# [profiles]
def profile_tour(folder):
    """The bundled H200 profile (for the loaded cuDNN): what it says, saved and loaded back."""
    names = profiles.bundled_profiles()                    # ['h100', 'h200']
    h200 = cb.DeviceProfile.bundled("h200")                # the 9.19.0 capture, converted for the loaded release
    path = h200.save(pathlib.Path(folder) / "h200.json")   # our format: the cuDNN release travels with it
    again = cb.DeviceProfile.load(path)
    return names, h200, again
# [/profiles]


# [offline_plan]
def offline_plan(profile, folder):
    """A plan for the profile's GPU, built here and saved: ship the file to the GPU machine."""
    g = graph_api()                                        # no handle: there is no GPU here
    plan, report = cb.build_first_plan(g.op_graph, device_profile=profile)
    return plan, plan.save(pathlib.Path(folder) / "conv_bias_relu.plan.json")
# [/offline_plan]


# [capture]
def capture_build_load(folder):
    """The round trip: capture this GPU's profile (save it, carry it to the build machine), build the plan
    against the profile alone, ship the plan back and load it onto a handle here."""
    with cb.Handle() as handle:
        local = cb.DeviceProfile.capture(handle)
        profile_file = local.save(pathlib.Path(folder) / "this_gpu.json")
        # ... on the build machine (no GPU needed):
        plan, plan_file = offline_plan(cb.DeviceProfile.load(profile_file), folder)
        # ... back on this machine:
        loaded = cb.load_plan(plan_file, handle=handle)    # runnable here (same GPU, same cuDNN version)
        return local, loaded
# [/capture]


def main():
    with tempfile.TemporaryDirectory() as folder:
        names, h200, again = profile_tour(folder)
        print("bundled profiles:", names)
        print(h200, "compute capability", h200.compute_capability)
        print("saved and loaded back equal:", again.deviceprop_json == h200.deviceprop_json,
              "cuDNN", again.cudnn_version_string)
        plan, path = offline_plan(h200, folder)
        print("offline plan:", plan, "->", path.name)
        if not gpu_available():
            print("no GPU: skipped capturing this machine's profile, building a plan for it and loading that "
                  "plan onto a handle")
            return 0
        local, loaded = capture_build_load(folder)
        print("captured:", local)
        print("built offline for it, loaded on this GPU:", loaded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
