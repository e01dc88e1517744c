#!/usr/bin/env python3
"""Fails when bench/accelerator_share.h does not override every virtual method of
core/accelerator.h: a method the wrapper misses silently falls back to the base class's
default in layer scope (issue 35: staging_over did, and offload's host KV lost its pinning).
The ops (core/accelerator_ops.h) all pass through one method, enqueue, so a new op needs no new
override; tests/forwarding_accelerator.h must forward supports and enqueue for the same reason
(its other optional methods keep the defaults on purpose: taps forward what they need).
Usage: share_forwards.py SOURCE_DIR"""
import re
import sys

root = sys.argv[1]


def code(path):
    """The file without its // comments (a parenthesis in a comment would fool the patterns)."""
    return re.sub(r'//[^\n]*', '', open(f'{root}/{path}').read())


base = code('core/accelerator.h')
virtuals = set(re.findall(r'virtual\s+[\w:<>,\s\*&]+?\b(\w+)\s*\(', base)) - {'~Accelerator'}
if not virtuals:
    sys.exit('FAIL: found no virtual methods in core/accelerator.h (parser out of date?)')
if not {'supports', 'enqueue'} <= virtuals:
    sys.exit('FAIL: core/accelerator.h has no virtual supports/enqueue (parser out of date?)')


def overridden(path):
    text = code(path)
    return set(re.findall(r'\b(\w+)\s*\([^;{]*?\)\s*(?:const\s*)?override\b', text, re.S))


wrappers = {'bench/accelerator_share.h': virtuals,
            'tests/forwarding_accelerator.h': {'supports', 'enqueue'}}
for path, required in wrappers.items():
    missing = sorted(required - overridden(path))
    if missing:
        sys.exit(f'FAIL: {path} does not forward ' + ', '.join(missing) +
                 ': override each there, forwarding to real_')
print(f'OK: AcceleratorShare overrides all {len(virtuals)} virtual methods of Accelerator; '
      'ForwardingAccelerator forwards every op')
