"""The outside view: another process holds memory on the same GPU; this
one allocates under gpuspy and asks for a snapshot, which must list both
processes as NVML sees them beside what gpuspy tracked."""
import ctypes, json, os, subprocess, sys, time
import torch

holder = subprocess.Popen([sys.executable, "-c",
    "import torch, time; x = torch.empty(6 << 30, dtype=torch.uint8, device='cuda'); "
    "print('held', flush=True); time.sleep(60)"],
    stdout=subprocess.PIPE, text=True, env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
holder.stdout.readline()
mine = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
rc = ctypes.CDLL(None).gpuspy_snapshot(b"with a neighbour")
holder.kill()
print(f"FRAMEWORK {json.dumps({'mode': 'outside', 'snapshot_rc': rc, 'holder_pid': holder.pid, 'my_pid': os.getpid()})}", flush=True)
