"""Cost of the fluid engine's loss models, in nanoseconds per flow-update (best of 3 runs), on the
paper's 10 Gbps 10-flow case (the default scenario, 1000 s, step 1 ms), one core. It uses only the
public API, so the same file times any installed version: run it in two environments, one after
the other, to compare versions on one machine.

    python benchmarks/fluid_loss_models.py [--loss tcp,proportional,sync-0.6] [--variants reno,cubic,highspeed]
"""

import argparse
import json
import time

import lossync
from lossync.scenario import default_scenario_path, load_scenario

MODELS = {
    "proportional": {"model": "proportional"},
    "sync-0.6": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "policy": "highest_rate"},
    "tcp": {"model": "tcp"},
}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--loss", default="tcp,proportional,sync-0.6")
    p.add_argument("--variants", default="reno,cubic,highspeed")
    p.add_argument("--duration", default="1000s")
    a = p.parse_args()
    out = {}
    for model in a.loss.split(","):
        for cc in a.variants.split(","):
            doc = load_scenario(default_scenario_path())
            doc["flows"][0]["cc"] = cc
            doc["run"]["duration"] = a.duration
            doc["loss"] = MODELS[model]
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                r = lossync.run(doc)
                best = min(best, 1e9 * (time.perf_counter() - t0) / r.summary["flow_updates"])
            out[f"{model}/{cc}"] = round(best, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
