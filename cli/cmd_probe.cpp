// `hybridbench probe`: measure read/write/copy bandwidth and idle and loaded latency of every
// (CPU node, memory node) pair of this machine, show them with their noise (and whether they
// settled), and optionally write a platform profile (schema hybridbench.platform/1,
// memtier/README.md) for --platform.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/command.h"
#include "cli/numeric_options.h"
#include "cli/output_options.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cpu/stream_read.h"
#include "memtier/cpulist.h"
#include "memtier/discover.h"
#include "memtier/probe.h"
#include "memtier/profile.h"
#include "memtier/settings.h"
#include "reports/output_file.h"
#include "reports/text_table.h"

namespace hb::cli {

namespace {

using namespace hb::memtier;

struct ProbeArgs {
  DiscoverOptions discover;
  std::string out, json, cpu_nodes, mem_nodes;
  bool quick = false, quiet = false;
  int device = 0;
  double duration = 0;
};

// "63.10 ±2.1%": the median and the project's one noise statistic (IQR / 1.349 median), with
// "!" when the figure never settled (warned about below the table). "-" when not measured.
std::string cell(const Figure& f, const char* fmt) {
  if (f.empty()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, f.summary.median);
  std::string s = buf;
  std::snprintf(buf, sizeof buf, " ±%.1f%%%s", 100 * f.noise(), f.settled() ? "" : " !");
  return s + buf;
}

std::string figure_text(const Figure& f, const char* unit_fmt) {
  return cell(f, unit_fmt) + " (n=" + std::to_string(f.summary.count) + ")";
}

// One line per figure that stopped sampling before its last window settled: a shared machine
// (a burst of load) or a drifting clock; the figure is still published, so say how far to trust it.
void print_unsettled(std::ostream& o, const ProbeResult& r) {
  for (const auto& p : r.pairs) {
    const std::pair<const char*, const Figure*> figures[] = {
        {"read bandwidth", &p.read_gbps},
        {"write bandwidth", &p.write_gbps},
        {"copy bandwidth", &p.copy_gbps},
        {"idle latency", &p.latency_ns},
        {"loaded latency", &p.loaded_latency_ns}};
    for (const auto& [name, f] : figures) {
      if (f->empty() || f->settled()) continue;
      char buf[320];
      std::snprintf(
          buf, sizeof buf,
          "  warning: %d -> %d %s did not settle (%s after %lld samples): its last window "
          "drifts %.1f%% (limit %.0f%%) with noise %.1f%% (limit %.0f%%); the machine was "
          "probably busy, probe again when it is quiet\n",
          p.cpu_node, p.mem_node, name, kFigureStops.name(f->stop),
          static_cast<long long>(f->summary.count + f->discarded), 100 * f->drift,
          100 * r.options.drift_tolerance, 100 * f->noise(), 100 * r.options.max_noise);
      o << buf;
    }
  }
}

void print_method(std::ostream& o, const ProbeResult& r) {
  const auto& opt = r.options;
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "each figure: median of its last %.2f s window, noise = IQR / 1.349 median, "
                "published once the window settles (drift <= %.0f%%, noise <= %.0f%%)",
                opt.seconds_per_figure, 100 * opt.drift_tolerance, 100 * opt.max_noise);
  o << "\n  " << buf << ", else after " << opt.settle_windows << " windows with ! above.\n"
    << "  bandwidth: " << (opt.bandwidth_bytes >> 20)
    << " MiB per pass with all CPUs of the CPU node ("
    << (r.pairs.empty() ? "" : r.pairs[0].read_kernel)
    << "; write: non-temporal stores; copy: read + written bytes, as STREAM counts); latency: "
    << (opt.latency_bytes >> 20) << " MiB random cyclic pointer chase, one thread, "
    << opt.latency_hops
    << " loads per sample, idle and while the node's other CPUs stream-read the same memory node; "
       "buffers bound to the memory node with THP requested.\n";
  for (const auto& l : r.links)
    o << "  GPU " << l.device << " " << kCopyLinks.name(l.link)
      << (l.link == CopyLink::hbm_copy ? " (read + write)"
                                       : " (pinned, NUMA node " + std::to_string(l.host_node) + ")")
      << ": " << figure_text(l.gbps, "%.1f GB/s") << ", measured with CUDA events\n";
  std::snprintf(buf, sizeof buf, "  probe took %.1f s\n", r.wall_seconds);
  o << buf;
  if (!r.virtual_machine.empty())
    o << "  measured inside a virtual machine (" << r.virtual_machine
      << "): these are a guest's figures, with the hypervisor between them and the hardware (under "
         "QEMU TCG "
         "the memory itself is emulated); do not read them as bare-hardware figures\n";
}

void print_table(std::ostream& o, const ProbeResult& r) {
  reports::TextTable t;
  for (const char* h : {"cpu -> mem", "kind", "read GB/s", "write GB/s", "copy GB/s",
                        "idle latency", "loaded latency"})
    t.add_column(h);
  for (const auto& p : r.pairs) {
    std::string kind(tier_kind_name(p.kind));
    if (p.emulated) kind += " (emulated)";
    t.add_row({std::to_string(p.cpu_node) + " -> " + std::to_string(p.mem_node), kind,
               cell(p.read_gbps, "%.2f"), cell(p.write_gbps, "%.2f"), cell(p.copy_gbps, "%.2f"),
               cell(p.latency_ns, "%.1f ns"), cell(p.loaded_latency_ns, "%.1f ns")});
  }
  std::istringstream lines(t.plain());
  for (std::string line; std::getline(lines, line);) o << "  " << line << "\n";
  o << "\n";
  for (const auto& p : r.pairs) {
    o << "  " << p.cpu_node << " -> " << p.mem_node
      << " pages: " << p.bandwidth_placement.summary();
    if (!p.loaded_latency_ns.empty()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "; under load %d CPU(s) read %.2f GB/s", p.load_threads,
                    p.load_gbps);
      o << buf;
    }
    o << "\n";
  }
  print_unsettled(o, r);
  print_method(o, r);
}
}  // namespace

CommandFn add_probe_command(CLI::App& app) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* sub = app.add_subcommand(
      "probe",
      "Measure bandwidth and latency of each (CPU node, memory node) pair and the host link");
  sub->add_flag("--quick", args->quick,
                "Smaller buffers and a shorter time per figure (about 4x faster)");
  add_seconds_option(
      *sub, "--duration", args->duration,
      "Seconds of each figure's sampling window (default 0.5, --quick 0.1); a figure "
      "whose window has not settled samples on, up to 4 windows",
      parse::RealRange{0, 3600, true, false});
  sub->add_option(
      "--out", args->out,
      "Write a platform profile (JSON) for `--platform FILE` (- = stdout, instead of the table)");
  sub->add_option("--cpu-nodes", args->cpu_nodes,
                  "CPU nodes to probe from, numactl style: 0, 0-1, !0 or all (default: all)");
  sub->add_option(
      "--mem-nodes", args->mem_nodes,
      "Memory nodes to probe, numactl style: 0,2, !1 or all (default: all with memory)");
  add_integer_option(*sub, "--cpu-node", args->discover.cpu_node,
                     "Reference CPU node for the kinds shown", -1, kMaxNodeId);
  sub->add_option("--emulate-cxl", args->discover.emulate_cxl,
                  "node=N: label NUMA node N as (emulated) CXL; bandwidth=GBPS,latency=NS: add a "
                  "simulated tier "
                  "to the profile (declared figures, never measured)");
  add_json_option(*sub, args->json, "the platform profile (a second name of --out)");
  sub->add_flag("-q,--quiet", args->quiet, "No progress lines on stderr");
  add_integer_option(*sub, "--device", args->device,
                     "CUDA device whose links (pinned H2D/D2H) and HBM copy are measured", 0,
                     kMaxDeviceIndex)
      ->capture_default_str();
  return [args] {
    const std::string out = out_or_json(args->out, args->json);
    reports::check_output_path(args->out.empty() ? "--json" : "--out",
                               out);  // before probing: a bad path should cost nothing
    const Topology topo = discover(args->discover);
    ProbeOptions opts = args->quick ? ProbeOptions::quick() : ProbeOptions{};
    opts.read_kernel = cpu::stream_read_kernel();
    if (args->duration > 0) opts.seconds_per_figure = args->duration;
    // numactl's syntax (all, !LIST) against this machine's nodes (memtier/cpulist.h).
    if (!args->cpu_nodes.empty())
      opts.cpu_nodes = parse_machine_list(args->cpu_nodes, "--cpu-nodes", topo.cpu_nodes());
    if (!args->mem_nodes.empty())
      opts.mem_nodes = parse_machine_list(args->mem_nodes, "--mem-nodes", probe_memory_nodes(topo));
    const bool quiet = args->quiet;
    ProbeResult result = probe(topo, opts, [quiet](const std::string& line) {
      if (!quiet) std::cerr << "probe: " << line << "\n";
    });
    // The GPU side: link and HBM copy figures, when a GPU is usable (else the profile has none
    // and says so by their absence; `run --mode model` then needs a preset or your figures).
    std::string no_gpu;
    const size_t link_bytes = (args->quick ? size_t{64} : size_t{256}) << 20;
    for (auto& l :
         measure_accelerator_links(args->device, link_bytes, args->quick ? 5 : 15, &no_gpu))
      result.links.push_back({l.link, l.host_node, l.device, Figure::of(std::move(l.gbps))});
    if (!quiet)
      std::cerr << "probe: " << (no_gpu.empty() ? "GPU links measured" : "no GPU links: " + no_gpu)
                << "\n";
    PlatformProfile profile = make_platform_profile(topo, read_system_settings(), result);
    if (!out.empty()) reports::write_output(out, platform_profile_json(profile));
    // The profile on stdout: the table goes to stderr (every subcommand's rule), and -q drops it.
    const bool json_on_stdout = reports::is_stdout_path(out);
    if (json_on_stdout && quiet) return kExitOk;
    std::ostream& text = json_on_stdout ? std::cerr : std::cout;
    text << "Probe of this machine (reference CPU node " << topo.cpu_node << ")\n";
    print_table(text, result);
    if (topo.simulated_cxl)
      text << "  simulated CXL tier on node " << topo.simulated_cxl->backing_node
           << ": declared figures only, recorded as emulated in the profile\n";
    for (const auto& w : profile.settings.warnings()) text << "  warning: " << w << "\n";
    if (!out.empty() && !json_on_stdout) text << "  platform profile written to " << out << "\n";
    return kExitOk;
  };
}

}  // namespace hb::cli
