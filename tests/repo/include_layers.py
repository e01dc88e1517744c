#!/usr/bin/env python3
"""Reads every tracked source's `#include "dir/file"` lines and fails when a folder includes one
that ARCHITECTURE.md's `layers` block does not allow (or when a listed exception is no longer
needed), so the layer picture there stays true. Usage: include_layers.py SOURCE_DIR"""
import os
import re
import subprocess
import sys

SOURCE_SUFFIXES = ('.h', '.cpp', '.cu', '.cuh', '.in')
# The folder each of our namespaces belongs to: naming `cpu::X` is depending on kernels/cpu even
# without an include (a forward declaration), so names follow the same rule as includes.
NAMESPACE_FOLDERS = {'cpu': 'kernels/cpu', 'cuda': 'kernels/cuda', 'ref': 'kernels/reference',
                     'memtier': 'memtier', 'baselines': 'baselines', 'hybrid': 'hybrid',
                     'reports': 'reports', 'bench': 'bench', 'model': 'model', 'cli': 'cli'}


def fenced_block(text, tag):
    m = re.search(r'```' + re.escape(tag) + r'\n(.*?)```', text, re.S)
    if not m:
        sys.exit(f'FAIL: ARCHITECTURE.md has no ```{tag} block')
    return [line.strip() for line in m.group(1).splitlines() if line.strip()]


def read_rules(arch):
    rules = {}
    for line in fenced_block(arch, 'layers'):
        folder, _, targets = line.partition(':')
        rules[folder.strip()] = targets.split()
    exceptions = set()
    for line in fenced_block(arch, 'layer-exceptions'):
        edge = line.split(':', 1)[0]
        src, _, dst = edge.partition('->')
        exceptions.add((src.strip(), dst.strip()))
    return rules, exceptions


def rule_for(folder, rules):
    """The line of the folder, or of its nearest parent that has one."""
    parts = folder.split('/')
    for n in range(len(parts), 0, -1):
        key = '/'.join(parts[:n])
        if key in rules:
            return rules[key]
    return None


def allowed(src, dst, rules):
    if dst == src:
        return True
    for target in rule_for(src, rules) or []:
        if target.endswith('/*'):
            root = target[:-2]
            if dst == root or dst.startswith(root + '/'):
                return True
        elif dst == target:
            return True
    return False


def dependencies(line):
    """(folder, what) for each folder this source line depends on: an include, or a name in one
    of our namespaces (comments are skipped)."""
    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
    if m:
        return [(os.path.dirname(m.group(1)), m.group(1))] if '/' in m.group(1) else []
    code = line.split('//', 1)[0]
    found = []
    for ns in re.findall(r'(?<![\w:])(?:hb::)?(\w+)::', code):
        if ns in NAMESPACE_FOLDERS:
            found.append((NAMESPACE_FOLDERS[ns], ns + '::'))
    return found


def main():
    top = sys.argv[1]
    os.chdir(top)
    try:
        files = subprocess.check_output(['git', 'ls-files'], text=True).split()
    except (OSError, subprocess.CalledProcessError):
        print('SKIP: not a git work tree (a source tarball); nothing to check')
        return 77
    rules, exceptions = read_rules(open('ARCHITECTURE.md', encoding='utf-8').read())
    violations, used_exceptions = [], set()
    for path in files:
        src = os.path.dirname(path)
        if not path.endswith(SOURCE_SUFFIXES) or src.split('/')[0] in ('tests', ''):
            continue
        if rule_for(src, rules) is None:
            violations.append(f'{path}: folder {src} has no line in ARCHITECTURE.md\'s layers block')
            continue
        with open(path, encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                for dst, what in dependencies(line):
                    if allowed(src, dst, rules):
                        continue
                    if (src, dst) in exceptions:
                        used_exceptions.add((src, dst))
                        continue
                    violations.append(f'{path}:{n}: {src} -> {dst} ({what}) is against the layering')
    for src, dst in sorted(exceptions - used_exceptions):
        violations.append(f'exception {src} -> {dst} is no longer needed: delete it from ARCHITECTURE.md')
    if violations:
        print('FAIL:\n  ' + '\n  '.join(violations))
        print('Move what both sides need down a layer (see ARCHITECTURE.md), or change the rule there '
              'with the reason.')
        return 1
    print(f'OK: {len(files)} tracked files, includes follow ARCHITECTURE.md '
          f'({len(used_exceptions)} listed exception(s))')
    return 0


if __name__ == '__main__':
    sys.exit(main())
