#!/usr/bin/env bash
# Runs numpy_interop.py with a python3 that has numpy (the one on PATH, else the system's);
# exit status 77 (skipped) when none has it.
here=$(dirname "$0")
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import numpy" 2>/dev/null; then
    exec "$py" "$here/numpy_interop.py" "$@"
  fi
done
echo "numpy is not installed (apt-get install python3-numpy): skipped"
exit 77
