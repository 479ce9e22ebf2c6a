"""A fake lab for the orphan test: a driver process that starts a worker child, reports its
pids and one progress line, then works until it is killed. Run as `python fake_lab.py PIDFILE`."""

import json
import os
import subprocess
import sys
import time

worker = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
with open(sys.argv[1], "w") as pids:
    json.dump([os.getpid(), worker.pid], pids)
print(json.dumps({"event": "progress", "done": 0, "total": 1, "message": "fake: step 1"}))
sys.stdout.flush()
while True:  # the "training": runs until the process group is killed
    time.sleep(1)
