#!/usr/bin/env python3
"""Fails when bench/accelerator_share.h does not override every virtual method of
core/accelerator.h: a method the wrapper misses silently falls back to the base class's
default in layer scope (issue 35: staging_over did, and offload's host KV lost its pinning).
Usage: share_forwards.py SOURCE_DIR"""
import re
import sys

root = sys.argv[1]
base = open(f'{root}/core/accelerator.h').read()
share = open(f'{root}/bench/accelerator_share.h').read()
virtuals = set(re.findall(r'virtual\s+[\w:<>,\s\*&]+?\b(\w+)\s*\(', base)) - {'~Accelerator'}
overridden = set(re.findall(r'\b(\w+)\s*\([^;{]*?\)\s*(?:const\s*)?override\b', share, re.S))
if not virtuals:
    sys.exit('FAIL: found no virtual methods in core/accelerator.h (parser out of date?)')
missing = sorted(virtuals - overridden)
if missing:
    sys.exit('FAIL: AcceleratorShare does not forward ' + ', '.join(missing) +
             ': override each in bench/accelerator_share.h, forwarding to real_')
print(f'OK: AcceleratorShare overrides all {len(virtuals)} virtual methods of Accelerator')
