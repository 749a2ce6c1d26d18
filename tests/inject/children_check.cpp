// children_check — runs one cdp_workloads workload under the children collector
// (libcdpkit_children.so) and checks the profile against the counts the workload kept itself:
// device grids launched, failed launches, blocks of device grids and host grids, each exactly,
// and no grid or call lost. With --depths also the grids by depth (depths of 63 and more in one,
// as the profile keeps them) and no grid paired with a call made after it started: the links,
// which are exact only where the launches of one kernel do not overlap in time (grids.hpp).
//
//   children_check <cdp_workloads> <workload> <size> <libcdpkit_children.so> <folder> [--depths]
//
// Exit: 0 every count agrees; 1 a count differs (each difference one line); 2 bad arguments or
// the workload failed on its own; 77 no usable CUDA device (the workload says so).

#include <cdpkit/schema/profile.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

namespace {

/// The value of `key=` in the workload's summary line.
std::string field(const std::string& line, const std::string& key) {
  const auto at = line.find(" " + key + "=");
  if (at == std::string::npos) return {};
  const auto from = at + key.size() + 2;
  return line.substr(from, line.find(' ', from) - from);
}

std::map<unsigned, unsigned long long> depths_of(const std::string& text) {
  std::map<unsigned, unsigned long long> out;
  if (text == "none") return out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const auto colon = part.find(':');
    out[static_cast<unsigned>(std::stoul(part.substr(0, colon)))] = std::stoull(part.substr(colon + 1));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool depths_too = argc == 7 && std::string(argv[6]) == "--depths";
  if (argc != 6 && !depths_too) {
    std::cerr << "usage: children_check <cdp_workloads> <workload> <size> <libcdpkit_children.so> <folder> [--depths]\n";
    return 2;
  }
  const std::string workloads = argv[1], workload = argv[2], size = argv[3], library = argv[4];
  const std::filesystem::path folder = argv[5];
  std::filesystem::create_directories(folder);
  const std::string profile = (folder / (workload + ".json")).string(), out = (folder / (workload + ".txt")).string();
  std::filesystem::remove(profile);
  const std::string command = "CUDA_INJECTION64_PATH='" + library + "' CDPKIT_PROFILE_OUT='" + profile + "' '" + workloads +
                              "' " + workload + " " + size + " > '" + out + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  std::string line, summary, all;
  while (std::getline(in, line)) {
    all += line + "\n";
    if (line.rfind("cdp_workloads: " + workload + " ", 0) == 0) summary = line;
    if (line.find("no usable CUDA device") != std::string::npos) {
      std::cout << line << "\n";
      return 77;
    }
  }
  std::cout << all;
  if (status != 0 || summary.empty()) {
    std::cerr << "children_check: the workload failed under the collector (status " << status << ")\n";
    return 2;
  }
  try {
    const cdpkit::schema::profile p = cdpkit::schema::load_profile(profile);
    int wrong = 0;
    const auto expect = [&](const std::string& what, unsigned long long seen, unsigned long long kept) {
      std::cout << "children_check: " << what << ": profile " << seen << ", workload " << kept << "\n";
      if (seen != kept) ++wrong;
    };
    if (p.runs.size() != 1 || !p.runs[0].trace) {
      std::cerr << "children_check: the profile holds no traced run\n";
      return 1;
    }
    const auto& t = *p.runs[0].trace;
    unsigned long long blocks = 0;
    std::map<unsigned, unsigned long long> depths;
    for (const auto& s : t.sites) {
      blocks += s.child_blocks;
      for (std::size_t d = 0; d < s.depth_hist.size(); ++d)
        if (s.depth_hist[d] != 0) depths[static_cast<unsigned>(d)] += s.depth_hist[d];
    }
    expect("device grids", t.summary.child_launches, std::stoull(field(summary, "device_grids")));
    expect("failed launches", t.summary.failed_launches, std::stoull(field(summary, "failed_launches")));
    expect("blocks of device grids", blocks, std::stoull(field(summary, "device_blocks")));
    expect("host grids", p.host_activity ? p.host_activity->kernels.size() : 0, std::stoull(field(summary, "host_grids")));
    std::map<unsigned, unsigned long long> kept;  // the profile's buckets: depths of 63 and more in the last
    for (const auto& [d, n] : depths_of(field(summary, "depths"))) kept[std::min(d, 63u)] += n;
    if (depths != kept) {
      std::cout << "children_check: grids by depth differ:";
      for (const auto& [d, n] : depths) std::cout << " " << d << ":" << n;
      std::cout << " (profile) against";
      for (const auto& [d, n] : kept) std::cout << " " << d << ":" << n;
      std::cout << " (workload)" << (depths_too ? "" : " (not checked: the links are exact only without overlap)") << "\n";
      wrong += depths_too ? 1 : 0;
    } else {
      std::cout << "children_check: grids by depth agree: " << field(summary, "depths") << "\n";
    }
    if (p.collector)
      for (const auto& n : p.collector->notes) {
        std::cout << "children_check: note: " << n << "\n";
        if (n.find("match no launch call") != std::string::npos || n.find("did not fit") != std::string::npos ||
            (depths_too && n.find("started before the call") != std::string::npos))
          ++wrong;
      }
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "children_check: " << e.what() << "\n";
    return 1;
  }
}
