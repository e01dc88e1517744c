#!/usr/bin/env python3
"""Fails when a function in a tracked C++/CUDA source is longer than 80 lines, naming each one
(file:line, name, length) and the fix, so "functions stay <= 80 lines" (the project's guide) is
a test and not a hope. Usage: function_length.py SOURCE_DIR

What counts as a function: a brace body at namespace or class scope whose head ends in a
parameter list (plus const/noexcept/override/-> T/...) or a constructor's initializer list, and a
lambda bound at namespace scope. Lambdas, local classes and blocks inside a function count with
it. Namespaces, class/struct/union/enum bodies, `extern "C"` blocks and brace initializers are
not functions. A function's length runs from the first line of its signature to its closing
brace, both included; comments, strings and preprocessor lines cannot open or close a brace.

Two ways past the limit, both visible in review:
- a function under kernels/ may stay long when it says why in a comment that starts `// long:`
  (followed by the reason), in the comment block right above its signature or inside it. Only
  kernels may: elsewhere a long function is split into named helpers.
- tests/repo/function_length_allow.txt lists `PATH NAME REASON` lines for functions being
  shortened on another branch; an entry must match a function that is over the limit, or the
  check fails and asks for its removal (so the list only shrinks)."""
import os
import re
import subprocess
import sys

LIMIT = 80
SOURCE_SUFFIXES = ('.h', '.cpp', '.cu', '.cuh')
SKIPPED_FOLDERS = ('tests/vm/',)
KERNEL_FOLDERS = ('kernels/',)
LONG_MARKER = re.compile(r'^\s*//\s*long:\s*\S')
ALLOWLIST = 'tests/repo/function_length_allow.txt'

TYPE_HEAD = re.compile(r'^(?:template\s*<.*>\s*)?(?:(?:typedef|export)\s+)?'
                       r'(?:class|struct|union|enum|namespace)\b', re.S)
ACCESS_LABELS = re.compile(r'^(?:\s*(?:public|private|protected)\s*:(?!:))+')
LINKAGE_HEAD = re.compile(r'^extern\s*""\s*$')
# What may follow a parameter list before the body: cv/ref qualifiers, noexcept(...), virt-specifiers,
# attributes, a trailing return type, a function-try-block.
TRAILING = re.compile(r'(?:\s+|const\b|volatile\b|mutable\b|override\b|final\b|constexpr\b|try\b|&&?|'
                      r'noexcept\s*(?:\(\))?|__device__|__host__|\[\[\]\])$')


def strip_code(src):
    """The source with comments, string/char literals and preprocessor lines blanked (newlines
    kept, so line numbers stay), and literals reduced to "" or ''."""
    out = []
    i, n = 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if c == '\n':
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if at_line_start and c == '#':
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n:
                if src[j] == '\n' and src[j - 1] != '\\':
                    break
                j += 1
            out.append('\n' * src.count('\n', i, j))
            i = j
            continue
        if c in ' \t\r':
            out.append(c)
            i += 1
            continue
        at_line_start = False
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
            continue
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * src.count('\n', i, j))
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', src[i:i + 24])
        if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            end = src.find(')' + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + '\n' * src.count('\n', i, end))
            i = end
            continue
        if c == '"' or (c == "'" and not digit_separator(src, i)):
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def digit_separator(src, i):
    """True when the ' at i sits inside a number (1'000'000), not opening a char literal."""
    j = i
    while j > 0 and (src[j - 1].isalnum() or src[j - 1] in "_'."):
        j -= 1
    return j < i and src[j].isdigit()


def collapse(text, open_ch, close_ch):
    """text with every balanced open_ch..close_ch group replaced by the pair alone."""
    out, depth = [], 0
    for c in text:
        if c == open_ch:
            if depth == 0:
                out.append(open_ch)
            depth += 1
        elif c == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(close_ch)
        elif depth == 0:
            out.append(c)
    return ''.join(out)


def template_prefix_removed(text):
    """text without a leading `template <...>` (its default arguments hold `=` and `<>`)."""
    m = re.match(r'\s*template\s*<', text)
    if not m:
        return text
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {'<': 1, '>': -1}.get(text[i], 0)
        i += 1
    return text[i:]


def classify(head):
    """('fn', name) when a brace after head opens a function body (`TEST(Suite, Name)` for
    gtest-style macros, `name (lambda)` for a lambda bound to a name); ('scope', None) for a
    namespace, class/struct/union/enum or `extern "C"` body; ('init', None) for a brace
    initializer."""
    flat = collapse(head.strip(), '{', '}')
    if not flat or TYPE_HEAD.match(flat) or LINKAGE_HEAD.match(flat):
        return 'scope', None
    parens = template_prefix_removed(collapse(flat, '(', ')')).strip()
    if TYPE_HEAD.match(parens):
        return 'scope', None
    lam = re.search(r'(\w+)\s*=\s*\[[^\[\]]*\]\s*(?:\(\)|mutable|constexpr|noexcept|->|$)', parens)
    if lam:
        return 'fn', lam.group(1) + ' (lambda)'
    # A constructor's initializer list: `Name(..) : a_(x), b_{y}`; the body's brace comes after
    # the last initializer's `)` or `}` (a brace before that is an initializer's own).
    m = re.search(r'\)\s*(?:noexcept\s*(?:\(\))?\s*)?:(?!:)', parens)
    if m:
        if not re.search(r'[)}]\s*$', parens):
            return 'init', None
        signature = parens[:m.start() + 1]
    else:
        signature = parens
        arrow = re.search(r'\)[^()]*->', signature)
        if arrow:  # a trailing return type
            signature = signature[:arrow.start() + 1]
        while True:
            trimmed = TRAILING.sub('', signature)
            if trimmed == signature:
                break
            signature = trimmed
        if not signature.endswith(')'):
            return 'init', None
    before = signature[:-2].rstrip()  # without the collapsed "()" of the parameter list
    # An `=` outside the parameter list (not operator=, ==, <=, ...) makes it an initializer.
    if re.search(r'(?<![=!<>+\-*/%&|^])=(?!=)', re.sub(r'operator\s*\S+', '', before)):
        return 'init', None
    before = re.sub(r'\s*<[^<>]*>$', '', before)  # an explicit specialization: f<float>(..)
    op = re.search(r'((?:[\w~]+::)*operator\s*(?:\(\)|[^\s(]+))$', before)
    if op:
        return 'fn', op.group(1)
    ident = re.search(r'([\w~]+(?:\s*::\s*[\w~]+)*)$', before)
    if not ident:
        return 'init', None
    name = re.sub(r'\s+', '', ident.group(1))
    if name in ('TEST', 'TEST_F', 'TEST_P', 'TYPED_TEST', 'TYPED_TEST_P'):
        args = re.search(r'\b' + name + r'\s*\(([^()]*)\)', head)
        if args:
            name += '(' + ','.join(a.strip() for a in args.group(1).split(',')) + ')'
    return 'fn', name


def functions(src):
    """[(name, first_line, last_line)] of the functions in the source text."""
    code = strip_code(src)
    found = []
    stack = []  # one (kind, name, first line) per open brace; kind: fn, inner, init or scope
    statement_start = 0

    def in_function():
        return any(kind in ('fn', 'inner') for kind, _, _ in stack)

    for i, c in enumerate(code):
        if c == ';':
            if not in_function() and not (stack and stack[-1][0] == 'init'):
                statement_start = i + 1
        elif c == '{':
            if in_function():
                stack.append(('inner', None, 0))  # a block, lambda or local class: counts with it
            elif stack and stack[-1][0] == 'init':
                stack.append(('init', None, 0))
            else:
                head = code[statement_start:i]
                access = ACCESS_LABELS.match(head)  # `public:` starts no declaration
                head_start = statement_start + (access.end() if access else 0)
                head = code[head_start:i]
                kind, name = classify(head)
                first = code.count('\n', 0, head_start + len(head) - len(head.lstrip())) + 1
                stack.append((kind, name, first))
                if kind == 'scope':
                    statement_start = i + 1
        elif c == '}' and stack:
            kind, name, first = stack.pop()
            if kind == 'fn':
                found.append((name, first, code.count('\n', 0, i) + 1))
            if kind in ('fn', 'scope') and not in_function():
                statement_start = i + 1
    return found


def has_long_marker(lines, first, last):
    """True when a `// long: reason` comment is inside the function or in the comment block
    right above its first line (lines are 1-based)."""
    if any(LONG_MARKER.match(line) for line in lines[first - 1:last]):
        return True
    k = first - 2
    while k >= 0 and lines[k].strip().startswith(('//', '/*', '*')):
        if LONG_MARKER.match(lines[k]):
            return True
        k -= 1
    return False


def read_allowlist(path):
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                sys.exit(f'FAIL: {path}:{n}: want `PATH NAME REASON`, got `{line}`')
            entries[(parts[0], parts[1])] = n
    return entries


def check(files, read, allow):
    """(problems, allowed, used allowlist keys) for the given paths; read(path) gives its text."""
    problems, allowed, used = [], [], set()
    for path in files:
        src = read(path)
        lines = src.splitlines()
        for name, first, last in functions(src):
            length = last - first + 1
            if length <= LIMIT:
                continue
            if (path, name) in allow:
                used.add((path, name))
                allowed.append(f'{path}:{first}: {name} ({length} lines, allow-listed)')
                continue
            if path.startswith(KERNEL_FOLDERS) and has_long_marker(lines, first, last):
                allowed.append(f'{path}:{first}: {name} ({length} lines, kernel says why)')
                continue
            fix = ('split it into named helpers with one job each, or say why this kernel must '
                   'stay long in a `// long: REASON` comment above or inside it'
                   if path.startswith(KERNEL_FOLDERS) else 'split it into named helpers with one job each')
            problems.append(f'{path}:{first}: {name} is {length} lines (limit {LIMIT}): {fix}')
    return problems, allowed, used


def source_files():
    files = subprocess.check_output(['git', 'ls-files'], text=True).split('\n')
    return [f for f in files if f.endswith(SOURCE_SUFFIXES) and not f.startswith(SKIPPED_FOLDERS)]


def main():
    os.chdir(sys.argv[1])
    try:
        files = source_files()
    except (OSError, subprocess.CalledProcessError):
        print('SKIP: not a git work tree (a source tarball); nothing to check')
        return 77
    allow = read_allowlist(ALLOWLIST)
    problems, allowed, used = check(
        files, lambda p: open(p, encoding='utf-8', errors='replace').read(), allow)
    for path, name in sorted(set(allow) - used):
        problems.append(f'{ALLOWLIST}:{allow[(path, name)]}: {path} {name} is no longer over '
                        f'{LIMIT} lines (or no longer exists): delete the entry')
    if problems:
        print('FAIL:\n  ' + '\n  '.join(problems))
        return 1
    print(f'OK: {len(files)} sources, every function <= {LIMIT} lines except:\n  ' + '\n  '.join(allowed)
          if allowed else f'OK: {len(files)} sources, every function <= {LIMIT} lines')
    return 0


if __name__ == '__main__':
    sys.exit(main())
