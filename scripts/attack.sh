#!/usr/bin/env bash
# Attack the CLI with >= 300 bad inputs and fault scenarios; every case must end cleanly:
# exit 2 with "hybridbench: error:" and "fix:" lines (or, for the inputs listed as legal,
# exit 0 with a valid result), no crash, no hang, no touched input, no leftover file and no
# half-written JSON. Usage: scripts/attack.sh [BINARY]  (default build/cli/hybridbench)
# Needs only coreutils and python3; works in a mktemp -d folder it deletes.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(realpath "${1:-$repo/build/cli/hybridbench}")"
[[ -x "$bin" ]] || { echo "attack.sh: no executable at $bin (build first)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
python3 - "$bin" "$repo" "$work" <<'PY'
import hashlib, json, os, random, shutil, signal, subprocess, sys, time
BIN, REPO, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
T0 = time.time()
INF = float('inf')
TINY = ['--model', 'qwen2.5-0.5b', '--seq-len', '1k', '--decode-steps', '4', '--warmup', '1',
        '--strategy', 'cpu-only,quest', '--timeout', '1', '--repetitions', '1', '-q']
ERR, OK = {2}, {0}
cases, results = [], {}


def case(cls, argv, files=None, expect=ERR, outputs=(), check=None, timeout=30, tag='', consumes=()):
    """files: name -> bytes | ('fifo',) | ('dir',) | ('link', target); outputs: files the case
    may leave (JSON ones must parse); check(folder, rc) -> problem or None."""
    cases.append(dict(cls=cls, argv=argv, files=files or {}, expect=set(expect), tag=tag,
                      outputs=set(outputs), check=check, timeout=timeout, consumes=set(consumes)))


def sha(path):
    if os.path.islink(path) or not os.path.isfile(path):
        return 'special'
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_case(i, c):
    d = os.path.join(WORK, 'c%04d' % i)
    os.mkdir(d)
    for name, v in c['files'].items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.unlink(p)
        if isinstance(v, bytes):
            open(p, 'wb').write(v)
        elif v[0] == 'fifo':
            os.mkfifo(p)
        elif v[0] == 'dir':
            os.makedirs(p, exist_ok=True)
        elif v[0] == 'link':
            os.symlink(v[1], p)
        elif v[0] == 'tree':
            shutil.copytree(v[1], p, symlinks=True)
    before = {}
    for root, dirs, fs in os.walk(d):
        for f in fs + dirs:
            p = os.path.join(root, f)
            before[os.path.relpath(p, d)] = sha(p)
    cmd = 'ulimit -v 8000000; exec timeout %d "$@"' % c['timeout']
    t = time.time()
    try:
        pr = subprocess.run(['bash', '-c', cmd, 'x', BIN] + c['argv'], cwd=d,
                            stdin=subprocess.DEVNULL, capture_output=True, timeout=c['timeout'] + 30)
        rc, err = pr.returncode, pr.stderr.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        rc, err = 124, ''
    dt = time.time() - t
    probs = []
    if rc == 124:
        probs.append('hang (timeout %ds)' % c['timeout'])
    elif rc < 0 or rc >= 128:
        probs.append('crash (exit %d)' % rc)
    elif rc not in c['expect'] and rc != 2:
        probs.append('wrong exit %d (expected %s)' % (rc, sorted(c['expect'])))
    elif rc == 2 and 2 not in c['expect']:
        probs.append('refused a legal input (exit 2): ' + err.strip().splitlines()[-1:][0][:200]
                     if err.strip() else 'refused a legal input (exit 2)')
    if rc in (1, 2):
        lines = err.splitlines()
        if not any(l.startswith('hybridbench: error:') for l in lines):
            probs.append('no "hybridbench: error:" line')
        if not any('fix:' in l for l in lines):
            probs.append('no "fix:" line')
    for root, dirs, fs in os.walk(d):
        for f in fs:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, d)
            if rel in before:
                if sha(p) != before[rel] and not (rc == 0 and rel in c['consumes']):
                    probs.append('input %s modified' % rel)
            elif rel not in c['outputs'] or rc not in OK | {3, 4}:
                probs.append('leftover file %s' % rel)
            elif rel.endswith('.json') and not os.path.islink(p):
                try:
                    json.load(open(p))
                except Exception:
                    probs.append('half-written report %s (not valid JSON)' % rel)
    for rel in before:
        if not os.path.lexists(os.path.join(d, rel)) and not (rc == 0 and rel in c['consumes']):
            probs.append('input %s removed' % rel)
    if c['check'] and not probs:
        pb = c['check'](d, rc)
        if pb:
            probs.append(pb)
    return rc, dt, probs, err


# ---------------------------------------------------------------- seed material
def tiny_report():
    d = os.path.join(WORK, 'seed')
    os.mkdir(d)
    pr = subprocess.run([BIN, 'run'] + TINY + ['--out', 'r.json'], cwd=d, capture_output=True)
    if pr.returncode != 0:
        sys.exit('attack.sh: the tiny sweep failed (exit %d):\n%s' % (pr.returncode, pr.stderr.decode()))
    return open(os.path.join(d, 'r.json'), 'rb').read()


def real_journal():
    """A journal left by a SIGKILL after its first finished unit, with the options used."""
    d = os.path.join(WORK, 'jseed')
    os.mkdir(d)
    opts = ['--model', 'qwen2.5-0.5b', '--seq-len', '1k,2k,3k', '--decode-steps', '4', '--warmup',
            '1', '--strategy', 'cpu-only,quest', '--timeout', '1', '--repetitions', '1',
            '--pass-process', 'same', '-q']
    p = subprocess.Popen([BIN, 'run'] + opts + ['--out', 'j.json'], cwd=d,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    jp = os.path.join(d, 'j.json.partial.jsonl')
    t = time.time()
    while time.time() - t < 60 and p.poll() is None:
        if os.path.exists(jp) and open(jp, 'rb').read().count(b'\n') >= 2:
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    p.wait()
    if not os.path.exists(jp) or os.path.exists(os.path.join(d, 'j.json')):
        return None, opts
    return open(jp, 'rb').read(), opts


REPORT = tiny_report()
RJ = json.loads(REPORT)
JOURNAL, JOPTS = real_journal()
NPOINTS = len(RJ['points'])
PROFILE = open(os.path.join(REPO, 'model/profiles/t4-pcie3.json'), 'rb').read()
HF = open(os.path.join(REPO, 'tests/bench/fixtures/hf_configs/qwen2.5-7b.json'), 'rb').read()
TOPO_DIR = os.path.join(REPO, 'tests/memtier/fixtures/topologies')
TOPO = open(os.path.join(TOPO_DIR, '24em64t-2n6c2t-pci.xml'), 'rb').read()
SYSFS = os.path.join(REPO, 'tests/memtier/fixtures/cpuless-mixed')


def valid_report(points=None):
    def chk(d, rc):
        for f in os.listdir(d):
            if f.endswith('.json') and f.startswith('out'):
                j = json.load(open(os.path.join(d, f)))
                if points is not None and len(j.get('points', [])) != points:
                    return 'lost points: %s has %d of %d' % (f, len(j.get('points', [])), points)
        return None
    return chk


# ---------------------------------------------------------------- numeric options
BADNUM = ['0', '-1', '1e19', '1e308', 'nan', 'inf', '2.5', '', '0x10', ' 5', '9' * 400, '5abc']


def legal(v, lo, hi, integer):
    try:
        x = float(v)
    except ValueError:
        return False
    if x != x or x in (float('inf'), float('-inf')) or (integer and not v.strip().lstrip("-").isdigit()):
        return False
    return lo <= x <= hi and x != INF


def numeric(cls, prefix, opt, lo, hi, integer, files=None, legal_expect=OK, legal_outputs=(),
            skip_legal=True):
    for v in BADNUM:
        lv = legal(v, lo, hi, integer)
        if v in ('0x10', ' 5') :
            exp = ERR | legal_expect  # lenient parsing of a hex or padded number is fine
        elif lv:
            if skip_legal:
                continue
            exp = legal_expect
        else:
            exp = ERR
        argv = [a for a in prefix]
        if opt in argv:  # replace the base's own value: a repeated option is refused before its value
            i = argv.index(opt)
            del argv[i:i + 2]
        if not (v == ' 5' and opt == '--duration'):  # a 5 s probe is legal but slow
            case(cls, argv + ['%s=%s' % (opt, v)], files, exp, legal_outputs)


RUN_INT = [('--decode-steps', 1, 1e5), ('--warmup', 0, 99999), ('--min-samples', 1, 1e5),
           ('--max-samples', 0, 1e5), ('--rounds', 1, 1000), ('--accuracy-steps', -1, 1e5),
           ('--microbatches', 0, 4096), ('--accelerator-threads', 0, 2), ('--host-threads', 0, 2),
           ('--seed', 0, 2 ** 64 - 1), ('--page-tokens', 16, 65536), ('--layers', 1, 1024),
           ('--repetitions', 1, 100), ('--device', 0, 1023), ('--gpus-per-node', 1, 1e6)]
RUN_FLT = [('--max-noise', 5e-324, 100), ('--timeout', 5e-324, 604800), ('--tie-margin', 0, 100),
           ('--min-time', 0, 604800), ('--gather-timeout', 0, 604800)]
for opt, lo, hi in RUN_INT:
    numeric('num:run', ['run'] + TINY + ['--out', 'out.json'], opt, lo, hi, True,
            legal_outputs=['out.json'])
for opt, lo, hi in RUN_FLT:
    numeric('num:run', ['run'] + TINY + ['--out', 'out.json'], opt, lo, hi, False,
            legal_outputs=['out.json'])
for v in ['0', '-1', '1e19', '', 'nan', '12Q', '1.5.5G', '-5M', '99999999999999999999G', '0x10']:
    case('num:run', ['run'] + TINY + ['--accelerator-memory=' + v, '--out', 'out.json'],
         expect=ERR | (OK if v == '0x10' else set()), outputs=['out.json'])
INF = float('inf')
CMP_FLT = [('--threshold', 5e-324, INF), ('--alpha', 5e-324, 0.999), ('--min-effect', 0, 0.05),
           ('--max-noise', 5e-324, INF), ('--drift-allowance', 0, INF),
           ('--group-drift', 0, 0.999), ('--accuracy-tolerance', 0, INF),
           ('--recall-tolerance', 0, 1), ('--needle-tolerance', 0, 1)]
for opt, lo, hi in CMP_FLT:
    numeric('num:compare', ['compare', 'r.json', 'r.json', '-q'], opt, lo, hi, False,
            {'r.json': REPORT}, legal_expect={0, 3, 4})
numeric('num:report', ['report', 'r.json', '--out', 'out.md'], '--itl-slo', 5e-324, 3600, False,
        {'r.json': REPORT}, legal_outputs=['out.md'])
numeric('num:topo', ['topo', '--topology', 't.xml'], '--cpu-node', -1, 1, True, {'t.xml': TOPO})
PROBE = ['probe', '--quick', '--duration', '0.05', '--cpu-nodes', '0', '--mem-nodes', '0', '-q']
numeric('num:probe', ['probe', '--quick', '-q'], '--duration', 5e-324, 3600, False)
numeric('num:probe', PROBE, '--device', 0, 1023, True)
numeric('num:probe', PROBE, '--cpu-node', -1, 0, True)
VM = ['validate-model', '--platform', 'p.json', '--model', 'qwen2.5-0.5b', '--seq-len', '1k',
      '--strategy', 'cpu-only', '--decode-steps', '4', '--timeout', '1']
numeric('num:validate-model', VM, '--goal', 5e-324, 10, False, {'p.json': PROFILE})
numeric('num:validate-model', VM, '--decode-steps', 1, 1e5, True, {'p.json': PROFILE})

# ---------------------------------------------------------------- lists, names, --opt
RUNO = ['run'] + TINY[:-1] + ['-q', '--out', 'out.json']
def run_with(opt, v, exp=ERR, files=None, base=None):
    b = list(base or RUNO)
    if opt in b:  # replace the tiny sweep's own value
        b[b.index(opt) + 1] = v
        case('list:run', b, files, exp, ['out.json'])
    else:
        case('list:run', b + [opt + '=' + v], files, exp, ['out.json'])
for opt, vals in [('--model', ['', ',', 'qwen2.5-0.5b,', 'qwen2.5-0.5b,,qwen2.5-0.5b', 'nope',
                               'qwen2.5-0.5b,qwen2.5-0.5b', ' qwen2.5-0.5b', 'QWEN2.5-0.5B']),
                  ('--seq-len', ['', ',', '1k,', '0', '-1k', '1k,1k', '1e19', '1k:0:x2', '1k:8k:x1',
                                 '1k:8k:+0', '8k:1k:x2', '1k:1t:+1', 'nan', '1.5k', '99999999999999k']),
                  ('--batch', ['', '0', '-1', '1,1', '1,,2', '2.5', '1e19', 'x', '99999999']),
                  ('--strategy', ['', ',', 'nope', 'cpu-only,cpu-only', 'cpu-only,,quest', 'ALL',
                                  'all,nope', ' quest']),
                  ('--kv-budget', ['', '0', '-1', '1', '0%', '101%', 'nan%', '1e19', '2k,2k', 'x']),
                  ('--kv-dtype', ['', 'fp8', 'fp16,fp16', 'fp16,,bf16', 'FP16']),
                  ('--workload', ['', 'nope', 'llama-like:', 'llama-like:nope=1', 'llama-like:decay=',
                                  'llama-like:decay=nan', 'llama-like:decay=1e308', 'llama-like:decay=-1',
                                  'llama-like:decay=1,decay=2', 'needle:needle_at=2', 'trace:',
                                  'uniform:noise=inf', 'diffuse:sink_tokens=2.5', 'llama-like:,']),
                  ('--accuracy-target', ['', 'recall', 'recall:', 'recall:2', 'recall:nan',
                                         'cosine:-1', 'nope:0.5', 'recall:0.5:1']),
                  ('--kv-node', ['', '-1', '99', 'x', '0,0', '1e19']),
                  ('--emulate-cxl', ['', 'node=', 'node=99', 'node=-1', 'bandwidth=0,latency=100',
                                     'bandwidth=nan,latency=1', 'bandwidth=1,latency=inf', 'x=1',
                                     'bandwidth=1', 'bandwidth=1e308,latency=1e308']),
                  ('--scope', ['', 'nope']), ('--accelerator', ['', 'tpu', 'CUDA']),
                  ('--kv-pages', ['', '2m']), ('--mode', ['', 'nope']),
                  ('--pass-process', ['', 'forked']), ('--distribute', ['', 'nope']),
                  ('--price', ['', '-1', 'nan', 'inf', '1e308', 'purchase=', 'purchase=1,years=0',
                               'purchase=-5,years=3', 'purchase=1,years=nan', 'x']),
                  ('--power', ['', 'gpu=', 'gpu=-1', 'gpu=nan', 'gpu=1e308', 'tpu=5', 'gpu=1,gpu=2']),
                  ('--platform', ['', 'preset:', 'preset:nope', 'nope.json', ',', 'presets,presets'])]:
    for v in vals:
        exp = ERR
        if v in ('qwen2.5-0.5b,qwen2.5-0.5b', '1k,1k', '1,1', 'cpu-only,cpu-only', '2k,2k',
                 'fp16,fp16', ' qwen2.5-0.5b', ' quest', 'FP16', 'CUDA', 'QWEN2.5-0.5B', 'ALL',
                 'qwen2.5-0.5b,', 'qwen2.5-0.5b,,qwen2.5-0.5b', '1k,', '1,,2', 'cpu-only,,quest',
                 'fp16,,bf16', '1'):  # '1': a 1-token budget is legal
            exp = ERR | OK  # a duplicate or a case/space variant may be folded; never crash
        run_with(opt, v, exp)
STRATS = ['h2o', 'streamingllm', 'infinigen', 'quest', 'offload']
OPTS = ['h2o.heavy_ratio', 'h2o.recent_ratio', 'h2o.heavy', 'h2o.recent', 'streamingllm.sinks',
        'streamingllm.window', 'streamingllm.budget_ratio', 'infinigen.partial_ratio',
        'infinigen.alpha', 'infinigen.max_ratio', 'infinigen.skew', 'quest.budget',
        'quest.offload', 'quest.min_pages', 'offload.chunk_tokens']
for key in OPTS:
    s = key.split('.')[0]
    for v in ['1e19', '-1', 'nan', 'inf', '', 'x', '1e308']:
        lenient = key == 'infinigen.alpha' and v in ('1e19', '1e308')  # max_ratio caps the selection
        run_with('--strategy', s, ERR | (OK if lenient else set()), base=RUNO + ['--opt', key + '=' + v])
for o in ['', '=', 'quest', 'quest.', 'quest.budget', 'quest.nope=1', 'nope.budget=1', '.=1',
          'quest.budget=1=2', 'cpu-only.x=1']:
    run_with('--strategy', 'quest', ERR, base=RUNO + ['--opt', o])
run_with('--strategy', 'cpu-only', ERR, base=RUNO + ['--opt', 'quest.budget=64'])  # not swept
case('list:run', RUNO + ['--opt', 'quest.budget=64', '--opt', 'quest.budget=128'], None, ERR | OK,
     ['out.json'])
for a in [['--resume', 'out.json', '--out', 'other.json'], ['--resume', ''], ['--out', ''],
          ['--config', ''], ['--seed', '-1'], ['--seed', '18446744073709551616'],
          ['--nope'], ['bogus-positional'], ['--min-samples', '10', '--max-samples', '5'], ['--list-models', '--model', 'nope']]:
    case('args:run', RUNO + a, None, ERR, ['out.json'])
for a in [[], ['nope'], ['run', 'run'], ['--version', 'x'], ['topo', '--json', 'a', '--json', 'b'],
          ['report'], ['compare', 'a.json'], ['topo', '--platform', 'p', '--topology', 't'],
          ['probe', '--cpu-nodes', ''], ['probe', '--cpu-nodes', '!0'], ['probe', '--mem-nodes', '99'],
          ['probe', '--cpu-nodes', '0-'], ['probe', '--cpu-nodes', '1-0'],
          ['probe', '--mem-nodes', '0,0,,'], ['probe', '--emulate-cxl', 'bandwidth=nan,latency=1'],
          ['topo', '--emulate-cxl', 'node=99'], ['topo', '--emulate-cxl', ''],
          ['report', 'r.json', '--format', 'pdf'], ['report', 'r.json', '--reference', 'nope'],
          ['compare', 'r.json', 'r.json', '--format', 'xml'],
          ['compare', 'r.json', 'r.json', '--accuracy-target', 'recall:2'],
          ['compare', 'r.json', 'r.json', '--min-effect', '0.5', '--threshold', '0.1'],
          ['validate-model', '--platform', 'r.json', '--accelerator', 'cuda'],
          ['validate-model', '--platform', 'nope.json']]:
    case('args:misc', a, {'r.json': REPORT}, ERR | (OK if a == ['--version', 'x'] else set()) if a else {0, 1, 2})

# ---------------------------------------------------------------- corrupted reports
rng = random.Random(51)
def mut(j, path, val):
    j = json.loads(json.dumps(j))
    o = j
    for k in path[:-1]:
        o = o[k]
    if val is KeyError:
        del o[path[-1]]
    else:
        o[path[-1]] = val
    return json.dumps(j).encode()
P0 = ['points', 0]
S = P0 + ['step', 'samples_ns']
bad_reports = {
    'empty': b'', 'space': b'   \n', 'null': b'null', 'array': b'[]', 'number': b'42',
    'string': b'"x"', 'obj': b'{}', 'bom': b'\xef\xbb\xbf' + REPORT, 'nul': REPORT[:50] + b'\0' + REPORT[50:],
    'deep': b'[' * 200000 + b']' * 200000, 'deepobj': b'{"a":' * 100000 + b'1' + b'}' * 100000,
    'schema0': mut(RJ, ['schema'], 'hybridbench.report/0'),
    'schema99': mut(RJ, ['schema'], 'hybridbench.report/99'), 'noschema': mut(RJ, ['schema'], KeyError),
    'schemaint': mut(RJ, ['schema'], 2), 'points_str': mut(RJ, ['points'], 'x'),
    'points_null': mut(RJ, ['points'], None), 'points_obj': mut(RJ, ['points'], {}),
    'points_empty': mut(RJ, ['points'], []), 'point_num': mut(RJ, P0, 5),
    'no_step': mut(RJ, P0 + ['step'], KeyError), 'step_str': mut(RJ, P0 + ['step'], 's'),
    'samples_str': mut(RJ, S, 'x'), 'samples_empty': mut(RJ, S, []),
    'samples_neg': mut(RJ, S, [-1.0] * 24), 'samples_zero': mut(RJ, S, [0.0] * 24),
    'samples_huge': mut(RJ, S, [1e308] * 24), 'samples_mixed': mut(RJ, S, [1.0, 'x'] * 12),
    'samples_null': mut(RJ, S, [None] * 24), 'samples_big': mut(RJ, S, [1000.0] * 3000000),
    'median_neg': mut(RJ, P0 + ['step', 'summary', 'median_ns'], -5.0),
    'median_wrong': mut(RJ, P0 + ['step', 'summary', 'median_ns'], 1e15),
    'count_wrong': mut(RJ, P0 + ['step', 'summary', 'count'], 1e19),
    'seq_neg': mut(RJ, P0 + ['axes', 'seq_len'], -1), 'seq_float': mut(RJ, P0 + ['axes', 'seq_len'], 2.5),
    'seq_huge': mut(RJ, P0 + ['axes', 'seq_len'], 1e300), 'seq_str': mut(RJ, P0 + ['axes', 'seq_len'], '1k'),
    'batch_zero': mut(RJ, P0 + ['axes', 'batch'], 0), 'strategy_num': mut(RJ, P0 + ['axes', 'strategy'], 1),
    'strategy_empty': mut(RJ, P0 + ['axes', 'strategy'], ''), 'status_bad': mut(RJ, P0 + ['status'], 'weird'),
    'recall_big': mut(RJ, P0 + ['accuracy', 'mass_recall'], 7.0),
    'recall_neg': mut(RJ, P0 + ['accuracy', 'mass_recall'], -1.0),
    'rel_l2_neg': mut(RJ, P0 + ['accuracy', 'rel_l2'], -1.0),
    'pass_sizes_bad': mut(RJ, P0 + ['step', 'pass_sizes'], [-1]),
    'round_slots_bad': mut(RJ, P0 + ['step', 'round_slots'], [99999999] * 24),
    'ctx_str': mut(RJ, ['context'], 'x'), 'ctx_missing': mut(RJ, ['context'], KeyError),
    'speedups_str': mut(RJ, ['speedups'], 'x'), 'speedup_nan_ratio': mut(RJ, ['speedups', 0, 'ratio'], -3.0),
    'capacity_bad': mut(RJ, ['capacity'], [{'kind': 5}]),
    'dup_points': json.dumps(dict(RJ, points=RJ['points'] + RJ['points'])).encode(),
}
txt = REPORT.decode()
bad_reports['nan'] = txt.replace('"rel_stdev": ', '"rel_stdev": NaN, "x": ', 1).encode()
bad_reports['nan_sample'] = txt.replace('"samples_ns": [', '"samples_ns": [NaN, ', 1).encode()
bad_reports['inf_sample'] = txt.replace('"samples_ns": [', '"samples_ns": [Infinity, ', 1).encode()
bad_reports['bigint'] = txt.replace('"seq_len": 1024', '"seq_len": 1' + '0' * 400, 1).encode()
bad_reports['dup_key'] = txt.replace('"schema": "hybridbench.report/2"',
                                     '"schema": "hybridbench.report/2", "schema": "x"', 1).encode()
bad_reports['dup_key_points'] = txt.replace('"points": [', '"points": 5, "points": [', 1).encode()
bad_reports['trailing'] = REPORT + b'garbage'
bad_reports['two_docs'] = REPORT + REPORT
bad_reports['bad_utf8'] = txt.replace('"host": "', '"host": "\xff', 1).encode('latin-1', 'replace')
for n in [1, 10, 100, len(REPORT) // 3, len(REPORT) // 2, len(REPORT) - 2]:
    bad_reports['trunc%d' % n] = REPORT[:n]
for n in range(12):
    b = bytearray(REPORT)
    pos = rng.randrange(len(b))
    b[pos] ^= 1 << rng.randrange(8)
    bad_reports['flip%d' % n] = bytes(b)
STRICT_EXP = {k: ERR for k in bad_reports}
for k in list(bad_reports):
    if k.startswith('flip') or k in ('bom', 'points_empty', 'median_wrong', 'status_bad', 'capacity_bad', 'speedups_str',
                                     'speedup_nan_ratio', 'ctx_missing', 'ctx_str', 'dup_points'):
        STRICT_EXP[k] = ERR | {0, 3, 4}  # may be judged on the rest; then never a crash
for k, data in bad_reports.items():
    case('report:report', ['report', 'bad.json', '--out', 'out.md'], {'bad.json': data},
         STRICT_EXP[k], ['out.md'], tag=k)
    case('report:compare', ['compare', 'r.json', 'bad.json', '-q'], {'bad.json': data, 'r.json': REPORT},
         STRICT_EXP[k] | ({3} if k in ('points_empty',) else set()), tag=k)
for name, f in [('dir', ('dir',)), ('fifo', ('fifo',)), ('link_dir', ('link', '/')),
                ('dangling', ('link', 'nowhere')), ('devzero', ('link', '/dev/zero'))]:
    case('report:special', ['report', 'x.json', '--out', 'out.md'], {'x.json': f}, ERR, timeout=20)
    case('report:special', ['compare', 'x.json', 'r.json'], {'x.json': f, 'r.json': REPORT}, ERR, timeout=20)
case('report:special', ['report', 'missing.json'], None, ERR)
case('report:legal', ['report', 'r.json', '--out', 'out.csv', '--format', 'csv'], {'r.json': REPORT}, OK, ['out.csv'])
case('report:legal', ['report', 'r.json', 'r.json', '--procurement'], {'r.json': REPORT}, ERR | OK)

# ---------------------------------------------------------------- platform profiles
PJ = json.loads(PROFILE)
def pmut(path, val):
    return mut(PJ, path, val)
bad_profiles = {'empty': b'', 'trunc': PROFILE[:len(PROFILE) // 2], 'null': b'null',
                'schema': pmut(['schema'], 'hybridbench.platform/9'), 'nomodel': pmut(['model'], KeyError),
                'model_str': pmut(['model'], 'x'), 'deep': b'[' * 100000,
                'nan': PROFILE.decode().replace('"value": ', '"value": NaN, "v": ', 1).encode(),
                'report_as_profile': REPORT}
acc = PJ['model']['accelerator']
for k in list(acc)[:6]:
    for v in [-1, 0, 1e308, 1e-308, 'x', None]:
        if isinstance(acc[k], dict) and 'value' in acc[k]:
            bad_profiles['acc_%s_%s' % (k, v)] = pmut(['model', 'accelerator', k, 'value'], v)
def walk_values(o, path):
    if isinstance(o, dict):
        if 'value' in o and isinstance(o['value'], (int, float)) and not isinstance(o['value'], bool):
            yield path
        for k, v in o.items():
            yield from walk_values(v, path + [k])
vals = list(walk_values(PJ['model'], ['model']))
for i, path in enumerate(vals[:: max(1, len(vals) // 10)]):
    for v in [-1, 1e308, 1e-308]:
        bad_profiles['v%d_%s' % (i, v)] = pmut(path + ['value'], v)
for k, data in bad_profiles.items():
    case('profile:run-model', ['run', '--mode', 'model', '--platform', 'p.json', '--model', 'qwen2.5-0.5b',
                               '--seq-len', '1k', '--decode-steps', '4', '--warmup', '1', '--strategy',
                               'cpu-only', '--timeout', '1', '--repetitions', '1', '-q', '--out', 'out.json'],
         {'p.json': data}, ERR, ['out.json'], tag=k)
for k in ['empty', 'trunc', 'nan', 'schema', 'report_as_profile']:
    case('profile:topo', ['topo', '--platform', 'p.json'], {'p.json': bad_profiles[k]}, ERR)
    case('profile:validate-model', VM, {'p.json': bad_profiles[k]}, ERR)
case('profile:special', ['topo', '--platform', 'p.json'], {'p.json': ('fifo',)}, ERR, timeout=20)
case('profile:special', ['run'] + TINY + ['--platform', 'p.json'], {'p.json': ('link', '/dev/urandom')}, ERR, timeout=20)

# ---------------------------------------------------------------- hwloc XML
tx = TOPO.decode()
bad_xml = {'empty': b'', 'trunc': TOPO[:len(TOPO) // 2], 'notxml': b'hello', 'nul': b'\0' * 100,
           'deep': (b'<object type="Machine">' * 50000), 'report': REPORT,
           'billion': b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]><topology>&g;</topology>',
           'os_index_neg': tx.replace('os_index="0"', 'os_index="-1"', 1).encode(),
           'os_index_huge': tx.replace('os_index="0"', 'os_index="99999999999999999999"', 1).encode(),
           'local_memory_neg': tx.replace('local_memory="', 'local_memory="-', 1).encode(),
           'cpuset_bad': tx.replace('cpuset="0x', 'cpuset="0xZZ', 1).encode(),
           'cpuset_huge': tx.replace('cpuset="0x', 'cpuset="0x' + 'f' * 100000 + ',', 1).encode(),
           'dup_numa': tx.replace('os_index="1"', 'os_index="0"').encode(),
           'no_root': b'<?xml version="1.0"?><topology></topology>',
           'wrong_root': b'<?xml version="1.0"?><html/>'}
for n in range(8):
    b = bytearray(TOPO)
    pos = rng.randrange(len(b))
    b[pos] = rng.choice(b'<>"=&\0\xff')
    bad_xml['flip%d' % n] = bytes(b)
for k, data in bad_xml.items():
    exp = ERR | (OK if k.startswith('flip') or k in ('dup_numa',) else set())
    case('xml:topo', ['topo', '--topology', 't.xml', '--json', 'out.json'], {'t.xml': data}, exp, ['out.json'], tag=k)
for f in [('fifo',), ('dir',), ('link', '/dev/zero')]:
    case('xml:special', ['topo', '--topology', 't.xml'], {'t.xml': f}, ERR, timeout=20)
for name in sorted(os.listdir(os.path.join(TOPO_DIR, 'crafted'))):
    case('xml:crafted', ['topo', '--topology', 't.xml'],
         {'t.xml': open(os.path.join(TOPO_DIR, 'crafted', name), 'rb').read()}, ERR | OK)

# ---------------------------------------------------------------- sysfs trees
NODE = 'sys/devices/system/node/'
for f, content in [('online', b''), ('online', b'garbage'), ('online', b'0-99999999'), ('online', ('fifo',)),
                   ('has_memory', b'\xff\xfe'), ('has_cpu', b'0-'), ('node0/cpulist', b'5-1'),
                   ('node0/cpulist', b'0-' + b'9' * 40), ('node0/distance', b''),
                   ('node0/distance', b'10 -5 20'), ('node0/distance', b'nan nan nan'),
                   ('node0/meminfo', b''), ('node0/meminfo', b'Node 0 MemTotal: -5 kB\n'),
                   ('node0/meminfo', b'Node 0 MemTotal: 99999999999999999999999 kB\n'),
                   ('node0/meminfo', ('fifo',)), ('node0/distance', ('fifo',)), ('node0/cpulist', ('dir',)),
                   ('node0/meminfo', ('link', '/dev/zero')), ('node1', ('link', '.'))]:
    files = {'root': ('tree', SYSFS)}
    files['root/' + NODE + f] = content
    exp = ERR | (OK if content in (b'', b'nan nan nan') or f == 'node1' else set())
    case('sysfs:topo', ['topo', '--sysfs-root', 'root', '--json', 'out.json'], files, exp, ['out.json'], timeout=20,
         tag='%s=%r' % (f, content))
for r in ['', 'nowhere', '/dev/null', 'file']:
    case('sysfs:topo', ['topo', '--sysfs-root', r], {'file': b'x'}, ERR)

# ---------------------------------------------------------------- HF config.json
HJ = json.loads(HF)
MODELRUN = ['run', '--seq-len', '1k', '--decode-steps', '4', '--warmup', '1', '--strategy', 'cpu-only',
            '--timeout', '1', '--repetitions', '1', '-q', '--out', 'out.json', '--model']
bad_hf = {'empty': b'', 'trunc': HF[:40], 'array': b'[]', 'deep': b'{"a":' * 100000, 'report': REPORT}
for k in ['hidden_size', 'num_attention_heads', 'num_hidden_layers', 'num_key_value_heads',
          'intermediate_size', 'max_position_embeddings', 'vocab_size', 'rope_theta']:
    for v in [0, -1, 1e19, 2.5, 'x', None, KeyError]:
        if k in HJ and not (v is KeyError and k in ('max_position_embeddings', 'rope_theta', 'vocab_size')):
            bad_hf['%s_%s' % (k, v)] = mut(HJ, [k], v)
bad_hf['heads_not_divisible'] = mut(HJ, ['num_attention_heads'], 27)
bad_hf['kv_gt_heads'] = mut(HJ, ['num_key_value_heads'], 1000)
bad_hf['nan'] = HF.decode().replace('"hidden_size": 3584', '"hidden_size": NaN', 1).encode()
for k, data in bad_hf.items():
    # no num_key_value_heads means multi-head attention (HF's default); rope_theta is unused here
    lenient = k.startswith('rope_theta') or k in ('num_key_value_heads_None',
                                                  "num_key_value_heads_<class 'KeyError'>")
    # a lenient one runs a real 7B-wide layer (multi-head KV without num_key_value_heads): slow
    case('hf:run', MODELRUN + ['config.json'], {'config.json': data}, ERR | (OK if lenient else set()),
         ['out.json'], tag=k, **({'timeout': 120} if lenient else {}))
case('hf:special', MODELRUN + ['cfgdir'], {'cfgdir/config.json': ('fifo',)}, ERR, ['out.json'], timeout=20)
case('hf:special', MODELRUN + ['cfgdir'], {'cfgdir/x': b''}, ERR, ['out.json'])
case('hf:special', MODELRUN + ['./nope.json'], None, ERR, ['out.json'])

# ---------------------------------------------------------------- safetensors traces
def st(header, data=b'', hlen=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(h) if hlen is None else hlen
    return n.to_bytes(8, 'little') + h + data
def T(dtype, shape, start, end):
    return {'dtype': dtype, 'shape': shape, 'data_offsets': [start, end]}
good = {'k': T('F32', [64, 2, 64], 0, 32768), 'v': T('F32', [64, 2, 64], 32768, 65536),
        'q': T('F32', [4, 14, 64], 65536, 65536 + 14336)}
gdata = b'\0' * (65536 + 14336)
bad_tr = {'empty': b'', 'short': b'\1\2\3', 'hlen_huge': st(good, gdata, 1 << 62),
          'hlen_past_end': st(good, b'', 10 ** 6), 'hlen_zero': st(b'', gdata, 0),
          'not_json': st(b'{not json', gdata), 'array': st(b'[]', gdata), 'deep': st(b'[' * 100000, b''),
          'no_tensors': st({}, b''), 'data_short': st(good, gdata[:100]),
          'dtype_bad': st(dict(good, k=T('Q4', [64, 2, 64], 0, 32768)), gdata),
          'shape_neg': st(dict(good, k=T('F32', [-64, 2, 64], 0, 32768)), gdata),
          'shape_huge': st(dict(good, k=T('F32', [2 ** 62, 2, 64], 0, 32768)), gdata),
          'shape_mismatch': st(dict(good, k=T('F32', [64, 2, 32], 0, 32768)), gdata),
          'offsets_rev': st(dict(good, k=T('F32', [64, 2, 64], 32768, 0)), gdata),
          'offsets_overlap': st(dict(good, v=T('F32', [64, 2, 64], 0, 32768)), gdata),
          'offsets_float': st(dict(good, k=T('F32', [64, 2, 64], 0.5, 32768)), gdata),
          'shape_2d': st(dict(good, k=T('F32', [64, 128], 0, 32768)), gdata),
          'heads_mismatch': st(dict(good, v=T('F32', [64, 4, 32], 32768, 65536)), gdata),
          'q_heads_bad': st(dict(good, q=T('F32', [4, 3, 64], 65536, 65536 + 3072)), gdata),
          'zero_tokens': st(dict(good, k=T('F32', [0, 2, 64], 0, 0), v=T('F32', [0, 2, 64], 0, 0)), gdata),
          'nan_data': st(good, b'\xff\xff\xff\x7f' * ((65536 + 14336) // 4)),
          'inf_data': st(good, b'\x00\x00\x80\x7f' * ((65536 + 14336) // 4)),
          'meta_bad': st(dict(good, __metadata__={'needle_token': '-5'}), gdata),
          'meta_type': st(dict(good, __metadata__=5), gdata),
          'dup_key': st(json.dumps(good)[:-1].encode() + b', "k": 5}', gdata)}
for k, data in bad_tr.items():
    case('trace:run', ['run', '--workload', 'trace:t.safetensors', '--decode-steps', '4', '--warmup', '1',
                       '--strategy', 'cpu-only', '--timeout', '1', '--repetitions', '1', '-q', '--out', 'out.json'],
         {'t.safetensors': data}, ERR, ['out.json'], tag=k)
for f in [('fifo',), ('dir',), ('link', '/dev/zero')]:
    case('trace:special', ['run', '--workload', 'trace:t.safetensors'] + TINY, {'t.safetensors': f}, ERR, timeout=20)
case('trace:legal', ['run', '--workload', 'trace:t.safetensors', '--decode-steps', '4', '--warmup', '1',
                     '--strategy', 'cpu-only', '--timeout', '1', '--repetitions', '1', '-q', '--out', 'out.json'],
     {'t.safetensors': st(good, bytes(rng.randrange(0, 60) for _ in range(len(gdata))))}, ERR | OK, ['out.json'])

# ---------------------------------------------------------------- outputs that are inputs, folders, devices
R = {'r.json': REPORT}
for out in ['r.json', '.', 'sub', 'nodir/x.json', 'link.json', '/dev/full', '/proc/self/status']:
    files = dict(R, sub=('dir',), **{'link.json': ('link', 'r.json')})
    for argv in [['report', 'r.json', '--out', out], ['report', 'r.json', '--html', out, '--out', 'o.md'],
                 ['compare', 'r.json', 'r.json', '--out', out], ['compare', 'r.json', 'r.json', '--bmf', out],
                 ['compare', 'r.json', 'r.json', '--json', out], ['run'] + TINY + ['--out', out],
                 ['topo', '--topology', 'r.json', '--json', out]]:
        if argv[0] == 'run' and out in ('r.json', 'link.json'):
            continue  # r.json is no input of run: replacing it is what --out asks
        case('out:' + argv[0], argv, files, ERR | ({1} if out == '/dev/full' else set()))  # 1: write failure
for argv, files in [(['topo', '--topology', 't.xml', '--json', 't.xml'], {'t.xml': TOPO}),
                    (['run'] + TINY + ['--platform', 'p.json', '--out', 'p.json'], {'p.json': PROFILE}),
                    (['run'] + TINY + ['--config', 'c.json', '--out', 'c.json'], {'c.json': b'{}'}),
                    (['run'] + TINY + ['--workload', 'trace:t.safetensors', '--out', 't.safetensors'],
                     {'t.safetensors': st(good, gdata)}),
                    (['run', '--model', 'm/config.json', '--out', 'm/config.json'] + TINY[2:], {'m/config.json': HF}),
                    (['validate-model', '--platform', 'p.json', '--out', 'p.json'] + VM[3:], {'p.json': PROFILE}),
                    (['validate-model', '--platform', 'p.json', '--report', 'p.json'] + VM[3:], {'p.json': PROFILE}),
                    (['validate-model', '--platform', 'p.json', '--out', 'a.json', '--report', 'a.json'] + VM[3:], {'p.json': PROFILE}),
                    (['compare', 'r.json', 'r.json', '--bmf', 'a.json', '--github-benchmark', 'a.json'], R),
                    (['report', 'r.json', '--html', 'a.html', '--out', 'a.html'], R),
                    (['probe', '--out', 'p.json', '--json', 'q.json'], {}),
                    (['run'] + TINY + ['--out', 'x.json', '--json', 'y.json'], {})]:
    case('out:same', argv, files, ERR)
# Writing the calibrated figures back into the profile it read is what --write-model is for
# (the fix validate-model's own refusals give), so that one input may change.
case('out:write-model', ['validate-model', '--platform', 'p.json', '--write-model', 'p.json'] + VM[3:],
     {'p.json': PROFILE}, OK, ['p.json'], consumes=['p.json'])
# --config files
for k, data in {'empty': b'', 'array': b'[1]', 'unknown': b'{"nope": 1}', 'type': b'{"decode-steps": "x"}',
                'nan': b'{"timeout": NaN}', 'huge': b'{"decode-steps": 1e19}', 'float': b'{"warmup": 2.5}',
                'deep': b'{"a":' * 100000, 'dup': b'{"seed": 1, "seed": 2}', 'null': b'{"model": null}',
                'list': b'{"strategy": [1, 2]}', 'self': b'{"config": "c.json"}', 'resume': b'{"resume": "c.json"}',
                'trunc': b'{"model": "qwen'}.items():
    case('config:run', ['run'] + TINY + ['--config', 'c.json', '--out', 'out.json'], {'c.json': data},
         # a flag on the command line wins over the file's value, so the file's may go unread
         ERR | (OK if k in ('dup', 'type', 'huge', 'float', 'null', 'list', 'self') else set()),
         ['out.json'], tag=k)
case('config:special', ['run'] + TINY + ['--config', 'c.json'], {'c.json': ('fifo',)}, ERR, timeout=20)

# ---------------------------------------------------------------- journals for --resume
JRUN = ['run'] + JOPTS + ['--resume', 'j.json']
case('journal:absent', JRUN, {}, ERR)
def all_points(d, rc):
    if rc != 0:
        return None
    j = json.load(open(os.path.join(d, 'j.json')))
    return None if len(j['points']) == 6 else 'lost points: %d of 6 after --resume' % len(j['points'])
if JOURNAL:
    lines = JOURNAL.split(b'\n')
    hdr = json.loads(lines[0])
    bad_j = {'empty': b'', 'garbage': b'garbage\n', 'hdr_trunc': lines[0][:len(lines[0]) // 2],
             'hdr_only_noeol': lines[0], 'bad_last': JOURNAL + b'{"unit": tru',
             'bad_middle': lines[0] + b'\n{garbage}\n' + b'\n'.join(lines[1:]),
             'dup_units': JOURNAL + b'\n'.join(lines[1:]), 'nul': JOURNAL.replace(b'"', b'\0', 3),
             'nan': JOURNAL.replace(b'1.0', b'NaN', 1), 'deep': lines[0] + b'\n' + b'[' * 100000 + b'\n',
             'other_schema': json.dumps(dict(hdr, journal='hybridbench.journal/99')).encode() + b'\n' +
                             b'\n'.join(lines[1:]),
             'report_as_journal': REPORT}
    for n in range(6):
        b = bytearray(JOURNAL)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        bad_j['flip%d' % n] = bytes(b)
    for k, data in bad_j.items():
        lenient = k in ('bad_last', 'hdr_only_noeol', 'dup_units') or k.startswith('flip')
        case('journal:resume', JRUN, {'j.json.partial.jsonl': data}, ERR | (OK if lenient else set()),
             ['j.json'], check=all_points, tag=k, consumes=['j.json.partial.jsonl'])
    # the real journal: a changed option is refused, the same options complete with every point
    case('journal:resume', JRUN[:JRUN.index('--seq-len') + 1] + ['1k,2k'] + JRUN[JRUN.index('--seq-len') + 2:],
         {'j.json.partial.jsonl': JOURNAL}, ERR)
    case('journal:resume', JRUN, {'j.json.partial.jsonl': ('fifo',)}, ERR, timeout=20)
    case('journal:resume', JRUN, {'j.json.partial.jsonl': ('dir',)}, ERR)
    case('journal:resume', JRUN, {'j.json.partial.jsonl': JOURNAL}, OK, ['j.json'], check=all_points,
         consumes=['j.json.partial.jsonl'])
    case('journal:resume', JRUN, {'j.json.partial.jsonl': JOURNAL, 'j.json': REPORT}, ERR | OK, ['j.json'],
         consumes=['j.json.partial.jsonl', 'j.json'])
else:
    print('attack.sh: could not make a real journal (SIGKILL after the first unit); journal cases skipped')

# ---------------------------------------------------------------- run them
print('attack.sh: %d cases against %s' % (len(cases), BIN), flush=True)
fails, per = [], {}
for i, c in enumerate(cases):
    rc, dt, probs, err = run_case(i, c)
    k = c['cls']
    p = per.setdefault(k, [0, 0])
    if probs:
        p[1] += 1
        fails.append((i, c, rc, probs, err))
        print('FAIL c%04d [%s%s] exit %d: %s\n  cmd: hybridbench %s\n  stderr: %s' % (
            i, k, (' ' + c['tag']) if c['tag'] else '', rc, '; '.join(probs), ' '.join(repr(a) if (not a or ' ' in a) else a for a in c['argv'])[:400],
            ' | '.join(l for l in err.strip().splitlines() if l.strip())[:300]), flush=True)
    else:
        p[0] += 1
    shutil.rmtree(os.path.join(WORK, 'c%04d' % i), ignore_errors=True)
print('\nper class (passed/failed):')
for k in sorted(per):
    print('  %-24s %4d %4d' % (k, per[k][0], per[k][1]))
kinds = {}
for f in fails:
    for pb in f[3]:
        kinds[pb.split(' ')[0]] = kinds.get(pb.split(' ')[0], 0) + 1
print('failure kinds: %s' % (', '.join('%s %d' % kv for kv in sorted(kinds.items())) or 'none'))
print('runtime %.0f s' % (time.time() - T0))
print('%d passed, %d failed' % (len(cases) - len(fails), len(fails)))
sys.exit(1 if fails else 0)
PY
