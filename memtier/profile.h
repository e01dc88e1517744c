#pragma once
// The JSON forms memtier owns (schemas in memtier/README.md):
//  * "hybridbench.topology/1": what `hybridbench topo --json` prints;
//  * "hybridbench.platform/1": a platform profile, written by `hybridbench probe --out FILE`
//    and loaded by --platform FILE instead of discovering and probing again. It embeds the
//    topology object, so the two never drift apart.
// A profile is an input memtier reads back (like an hwloc XML), which is why its reader and
// writer live here rather than in reports/. nlohmann types stay inside memtier.
#include <string>

#include "memtier/probe.h"
#include "memtier/settings.h"
#include "memtier/topology.h"

namespace hb::memtier {

struct PlatformProfile {
  std::string source = "measured";  // figures were measured on `host` by `hybridbench probe`
  std::string created_utc, host, tool_version;
  Topology topology;
  SystemSettings settings;
  ProbeResult probe;
};

// Stamps date, host name and tool version.
PlatformProfile make_platform_profile(Topology topo, SystemSettings settings, ProbeResult probe);

std::string topology_json(const Topology& topo, const SystemSettings& settings);
std::string platform_profile_json(const PlatformProfile& profile);

// Validates while reading; errors name `file` and the JSON path. The topology comes back
// with source "profile" (it describes the machine the profile was measured on).
PlatformProfile parse_platform_profile(const std::string& text, const std::string& file);
PlatformProfile load_platform_profile(const std::string& path);

}  // namespace hb::memtier
