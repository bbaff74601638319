"""Model-zoo inference throughput (issue 5): images/s at batch 1 and 16,
3x224x224, hybridized, random weights (speed does not depend on them).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_zoo.py --benchmark-only
"""
import pytest

from workloads import zoo_inference

MODELS = ["resnet18_v1", "resnet50_v1", "mobilenet1.0", "squeezenet1.1"]


@pytest.mark.parametrize("batch", [1, 16])
@pytest.mark.parametrize("name", MODELS)
def test_zoo_inference(benchmark, name, batch):
    _, step = zoo_inference(name, batch)
    benchmark.pedantic(step, rounds=3 if batch == 16 else 10, warmup_rounds=1)
    benchmark.extra_info["images_per_s"] = batch / benchmark.stats.stats.median
