"""A module that takes 0.3 s to import: the PyTorch view must not start
while it is being imported (torch_late.py)."""
import time

time.sleep(0.3)
