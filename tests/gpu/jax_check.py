import json, os
import jax, jax.numpy as jnp

x = jnp.ones((4096, 4096), dtype=jnp.float32)
y = (x @ x).block_until_ready()
keep = [jnp.zeros(((i + 1) * 1024 * 1024,), dtype=jnp.uint8).block_until_ready() for i in range(4)]  # LEAK
st = jax.devices()[0].memory_stats() or {}
print("FRAMEWORK " + json.dumps({"mode": "jax " + os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default")
                                 + (" prealloc=" + os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true")),
                                 "bytes_limit": st.get("bytes_limit"),
                                 "bytes_reserved": st.get("bytes_reserved"),
                                 "peak_bytes_in_use": st.get("peak_bytes_in_use"),
                                 "bytes_in_use": st.get("bytes_in_use")}), flush=True)
