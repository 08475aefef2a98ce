"""PyTorch tests for pytest --gpuspy on a GPU (scripts/gpu-check, case
pytest-torch; tests/gpu/pytest_torch_check.py runs them and judges):
a tensor freed, a tensor kept in a new segment of the caching allocator's
pool (its cache, apart: counted only with --gpuspy-include-pools), a
1 GiB tensor over a 512 MiB limit, and the same within a 2 GiB one."""
import pytest
import torch

MIB = 1 << 20
kept = []


@pytest.mark.gpu_no_leak
def test_freed():
    x = torch.ones(64 * MIB, dtype=torch.uint8, device="cuda")
    assert int(x[0]) == 1
    del x


@pytest.mark.gpu_no_leak
def test_kept_in_pool():
    kept.append(torch.ones(320 * MIB, dtype=torch.uint8, device="cuda"))  # a new segment


@pytest.mark.gpu_limit_memory("512 MiB")
def test_over_limit():
    x = torch.ones(1024 * MIB, dtype=torch.uint8, device="cuda")
    del x
    torch.cuda.empty_cache()  # so that the next test's tensor is a new segment too


@pytest.mark.gpu_limit_memory("2 GiB")
def test_within_limit():
    x = torch.ones(1024 * MIB, dtype=torch.uint8, device="cuda")
    del x
