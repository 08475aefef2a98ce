import json
import cupy as cp

pool = cp.get_default_memory_pool()
keep = [cp.ones((i + 1) * 1024 * 1024, dtype=cp.uint8) for i in range(8)]  # LEAK
x = cp.random.random((2048, 2048), dtype=cp.float32)
y = x @ x
del y
peak = pool.total_bytes()
print("FRAMEWORK " + json.dumps({"mode": "cupy", "pool_total_bytes": peak,
                                 "pool_used_bytes": pool.used_bytes()}), flush=True)
