#!/usr/bin/env python3
"""Fails when a backend folder of kernels/ has no line in the backend registry
(kernels/backend.cpp: backends()), or a line names a folder that does not exist: a backend is
its folder plus that one line (kernels/README.md). Every folder of kernels/ is a backend but
`reference` (the fp64 reference the backends are tested against).
Usage: backends_registered.py SOURCE_DIR"""
import os
import re
import sys

root = sys.argv[1]
kernels = f'{root}/kernels'
folders = {d for d in os.listdir(kernels) if os.path.isdir(f'{kernels}/{d}')} - {'reference'}
registry = open(f'{kernels}/backend.cpp').read()
body = re.search(r'backends\(\)\s*\{(.*?)\n\}', registry, re.S)
if not body:
    sys.exit('FAIL: found no backends() in kernels/backend.cpp (parser out of date?)')
lines = set(re.findall(r'\b(\w+)::backend\(\)', body.group(1)))
missing, stray = sorted(folders - lines), sorted(lines - folders)
if missing:
    sys.exit('FAIL: kernels/' + ', kernels/'.join(missing) + ' has no line in backends() '
             '(kernels/backend.cpp): add `<folder>::backend(),` there')
if stray:
    sys.exit('FAIL: backends() names ' + ', '.join(stray) + ', which has no folder in kernels/')
print(f'OK: {len(folders)} backend folders, each registered: ' + ', '.join(sorted(folders)))
