"""Host-side judgement of what a guest scenario brought back (files named by scenarios/lib.sh:
NAME.out, NAME.err, NAME.rc, plus the JSON reports). check() returns failure messages;
report() returns the lines worth showing in the CTest log either way."""
import json


def _text(files, name):
    return files.get(name, b"").decode(errors="replace")


def _rc(files, step):
    t = _text(files, step + ".rc").strip()
    return int(t) if t.lstrip("-").isdigit() else None


def _json(files, name):
    try:
        return json.loads(files[name])
    except (KeyError, ValueError):
        return None


def _node(topo, idx):
    return next((n for n in (topo or {}).get("nodes", []) if n.get("os_index") == idx), None)


def _expect_ok(files, step, fails):
    rc = _rc(files, step)
    if rc != 0:
        err = _text(files, step + ".err").strip().splitlines()[-3:]
        fails.append(f"step {step} exited {rc}: {' | '.join(err)}")
        return False
    return True


def _host_regions(point):
    """(role, intended, {node: pages}) of each host-memory KV region of a run report point."""
    return [(r["role"], r.get("intended", ""), {int(k): v for k, v in r.get("observed_pages_per_node", {}).items()})
            for r in point.get("placement", []) if not r.get("intended", "").startswith("accelerator")]


def _node_of(location):
    """The NUMA node a location string names: "cxl@2" -> 2, "cxl@2(emulated)" -> 2."""
    return int(location.split("@")[1].split("(")[0]) if "@" in location else None


def _misplaced(regions):
    """Regions whose pages were not all found on the node their location names ("cxl@2")."""
    bad = []
    for role, intended, pages in regions:
        node = _node_of(intended)
        if not pages or set(pages) != {node}:
            bad.append(f"{role} meant for {intended} has pages on nodes {pages}")
    return bad


def _points(report, strategy):
    return [p for p in (report or {}).get("points", []) if p.get("axes", {}).get("strategy") == strategy]


def check_numa_hmat(files):
    fails = []
    if _expect_ok(files, "topo_json", fails):
        topo = _json(files, "topo_json.out")
        n1 = _node(topo, 1)
        if not n1:
            fails.append("topo --json has no node 1")
        else:
            if n1["kind"] != "far":
                fails.append(f"node 1 is '{n1['kind']}', expected far (CPU-less, slower): {n1['reasons']}")
            if n1["cpus"] != "":
                fails.append(f"node 1 should be CPU-less, has CPUs {n1['cpus']}")
            why = " ".join(n1["reasons"])
            for want in ("CPU-less", "distance 20 > 10", "HMAT bandwidth 5120", "HMAT latency 30"):
                if want not in why:
                    fails.append(f"node 1 reasons lack '{want}': {n1['reasons']}")
            perf = [p for p in n1["perf"] if p["initiator_node"] == 0]
            if not perf or perf[0]["read_bandwidth_mibps"] != 5120 or perf[0]["read_latency_ns"] != 30:
                fails.append(f"node 1 HMAT figures from node 0 should be 5120 MiB/s, 30 ns: {n1['perf']}")
        n0 = _node(topo, 0)
        if not n0 or n0["kind"] != "local-dram":
            fails.append(f"node 0 should be local-dram: {n0}")
    if _expect_ok(files, "run_kv1", fails):
        pts = _points(_json(files, "run_kv1.json"), "cpu-only")
        if not pts or pts[0]["status"] != "ok":
            fails.append(f"cpu-only with --kv-node 1 did not run: {[(p['status'], p['reason']) for p in pts]}")
        else:
            regions = _host_regions(pts[0])
            if not regions or any(not i.endswith("@1") for _, i, _ in regions):
                fails.append(f"cpu-only with --kv-node 1 placed KV at {[i for _, i, _ in regions]}, expected node 1")
            fails += [f"cpu-only: {m}" for m in _misplaced(regions)]
    if _expect_ok(files, "probe", fails):
        prof = _json(files, "platform.json")
        pairs = {(p["cpu_node"], p["mem_node"]): p for p in (prof or {}).get("probe", {}).get("pairs", [])}
        for mem in (0, 1):
            p = pairs.get((0, mem))
            if not p or p["read_bandwidth_gbps"]["median"] <= 0 or p["latency_ns"]["median"] <= 0:
                fails.append(f"probe has no figures for CPU node 0 -> memory node {mem}")
            elif not p["placement"]["bandwidth"]["ok"]:
                fails.append(f"probe buffer for node {mem} was not where it was bound: {p['placement']['bandwidth']}")
        vm = (prof or {}).get("probe", {}).get("virtual_machine", "")
        if not vm:
            fails.append("the platform profile does not say the figures were measured in a virtual machine")
        if "virtual machine" not in _text(files, "probe.out"):
            fails.append("probe's table does not say it ran in a virtual machine")
    return fails


def check_cxl(files):
    fails = []
    if _rc(files, "daxctl_reconfigure") != 0:
        fails.append("the CXL node was not made (see cxl_create_region/ndctl/daxctl steps on the console)")
        return fails
    if _expect_ok(files, "topo_json", fails):
        topo = _json(files, "topo_json.out")
        cxl = [n for n in (topo or {}).get("nodes", []) if n["kind"] == "cxl"]
        if len(cxl) != 1:
            fails.append(f"expected one cxl node, got {[(n['os_index'], n['kind']) for n in (topo or {}).get('nodes', [])]}")
        else:
            n = cxl[0]
            if n["cxl_link"] != "region0 via dax0.0":
                fails.append(f"cxl node {n['os_index']}: cxl_link '{n['cxl_link']}', expected 'region0 via dax0.0'")
            if not any("CXL: region0 via dax0.0" in r for r in n["reasons"]):
                fails.append(f"cxl node reasons do not name the region/DAX link: {n['reasons']}")
            if n["cpus"] != "":
                fails.append(f"cxl node {n['os_index']} should be CPU-less")
        # Linux 6.1 has no region mode file; memtier reads it from the pmem_region0 child.
        regions = {r["name"]: r for r in (topo or {}).get("cxl_regions", [])}
        if regions.get("region0", {}).get("mode") != "pmem":
            fails.append(f"region0 should be read as a pmem region: {regions.get('region0')}")
    if _expect_ok(files, "run", fails):
        report = _json(files, "run.json")
        topo = _json(files, "topo_json.out") or {}
        cxl_nodes = {n["os_index"] for n in topo.get("nodes", []) if n["kind"] == "cxl"}
        for strategy in ("hybridgen", "cpu-only"):
            pts = _points(report, strategy)
            if not pts or any(p["status"] != "ok" for p in pts):
                fails.append(f"{strategy} did not complete: {[(p['status'], p['reason']) for p in pts]}")
        hg = _points(report, "hybridgen")
        if hg and hg[0]["status"] == "ok":
            params, regions = hg[0]["strategy_params"], _host_regions(hg[0])
            if not params.get("v_tier", "").startswith("cxl@"):
                fails.append(f"hybridgen v_tier is '{params.get('v_tier')}', expected the CXL node")
            if not params.get("k_tier", "").startswith("local-dram@0"):
                fails.append(f"hybridgen k_tier is '{params.get('k_tier')}', expected local-dram@0")
            # K only in local DRAM; V on the CXL node (a few hot V pages may be promoted to DRAM).
            k_at = {i for r, i, _ in regions if r == "K"}
            v_at = {i for r, i, _ in regions if r == "V"}
            if k_at != {"local-dram@0"}:
                fails.append(f"hybridgen K regions at {sorted(k_at)}, expected only local-dram@0")
            if not any(i.startswith("cxl@") and _node_of(i) in cxl_nodes for i in v_at):
                fails.append(f"hybridgen V regions at {sorted(v_at)}, none on the CXL node {sorted(cxl_nodes)}")
            fails += [f"hybridgen: {m}" for m in _misplaced(regions)]
    return fails


def check_bad_input(files):
    fails = []
    for step, node, says in (("offline", 2, "is offline"), ("missing", 9, "does not exist"),
                             ("too_small", 2, "too little for the KV cache")):
        rc, err = _rc(files, step), _text(files, step + ".err")
        if rc is None:
            fails.append(f"step {step} did not run")
        elif rc == 0:
            fails.append(f"step {step}: placing KV on node {node} succeeded; it must fail")
        elif rc != 2 or f"node {node}" not in err or says not in err or "fix:" not in err:
            fails.append(f"step {step}: exit {rc}, stderr does not say node {node} {says} with a fix: {err.strip()}")
    return fails


CHECKS = {"numa-hmat": check_numa_hmat, "cxl": check_cxl, "bad-input": check_bad_input}


def check(scenario, files):
    return CHECKS[scenario](files)


def report(scenario, files):
    """Short evidence for the log: the text topo, and the error lines of failing steps."""
    lines = []
    for name in ("topo.out", "probe.out", "run.out", "run_kv1.out"):
        if name in files:
            lines += [f"[{name}]"] + _text(files, name).rstrip().splitlines()
    for step in ("offline", "missing", "too_small"):
        if step + ".err" in files:
            lines += [f"[{step}: exit {_rc(files, step)}]"] + _text(files, step + ".err").rstrip().splitlines()
    return lines
