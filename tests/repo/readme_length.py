#!/usr/bin/env python3
"""Fails when a tracked README.md is longer than 300 lines, or when a top-level folder has no
README.md (issue 35 part 9): a folder's README says what the folder owns and how to change it;
dated measurements go to PERFORMANCE-LOG.md and long reference to its own file beside the
README. Usage: readme_length.py SOURCE_DIR"""
import os
import subprocess
import sys

MAX_LINES = 300


def problems(paths, line_count):
    """The violations among the repository's files `paths` (relative, '/'-separated);
    line_count(path) gives a README's number of lines."""
    found = []
    for path in sorted(p for p in paths if os.path.basename(p) == 'README.md'):
        n = line_count(path)
        if n > MAX_LINES:
            found.append(f'{path}: {n} lines, over {MAX_LINES}: keep what the folder owns and how to '
                         'change it; move dated figures to PERFORMANCE-LOG.md and long reference '
                         'to a file of its own beside the README, linked from it')
    folders = sorted({p.split('/')[0] for p in paths if '/' in p and not p.startswith('.')})
    for folder in folders:
        if f'{folder}/README.md' not in paths:
            found.append(f'{folder}/: no README.md: add one that says what the folder owns and how '
                         'to change it (and list the folder in README.md and ARCHITECTURE.md)')
    return found


def self_test():
    """The check must be able to fail: a long README and a folder without one are caught."""
    fake = {'a/README.md': MAX_LINES + 1, 'a/x.cpp': 0, 'b/y.cpp': 0, 'README.md': MAX_LINES,
            '.ci/run': 0}
    got = problems(set(fake), lambda p: fake[p])
    want = ['a/README.md: 301 lines', 'b/: no README.md']
    if len(got) != 2 or not all(g.startswith(w) for g, w in zip(got, want)):
        sys.exit(f'FAIL: the check itself is broken: {got}')


def main():
    self_test()
    os.chdir(sys.argv[1])
    try:
        files = subprocess.check_output(
            ['git', 'ls-files', '--cached', '--others', '--exclude-standard'], text=True).split('\n')
    except (OSError, subprocess.CalledProcessError):
        print('SKIP: not a git work tree (a source tarball); nothing to check')
        return 77
    paths = {p for p in files if p and os.path.exists(p)}

    def line_count(path):
        with open(path, encoding='utf-8', errors='replace') as f:
            return len(f.read().splitlines())

    found = problems(paths, line_count)
    if found:
        print('FAIL:\n  ' + '\n  '.join(found))
        return 1
    readmes = sum(1 for p in paths if os.path.basename(p) == 'README.md')
    print(f'OK: {readmes} README.md files, each <= {MAX_LINES} lines; every top-level folder has one')
    return 0


if __name__ == '__main__':
    sys.exit(main())
