// Example: trace a run and write it as a profile (cdpkit/profiling).
//
// A trace_session turns the launch layer's device trace on around a run: every child-grid request
// (launched or done inline, its size, depth and site), the pending high-water mark, divergence
// probes. profile_document writes runs and their traces as one JSON profile, which cdpkit-report
// (or the html_report example) turns into an HTML report.
//
// Usage: profile_run [out.json]   (default: bfs_profile.json)

#include <cdpkit/bfs.hpp>
#include <cdpkit/graph.hpp>
#include <cdpkit/launch.hpp>
#include <cdpkit/profiling/profile.hpp>
#include <cdpkit/profiling/trace_session.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  const std::string path = argc > 1 ? argv[1] : "bfs_profile.json";

  // 1. The run to trace: BFS with thresholded child grids on an RMAT graph.
  const cdpkit::csr_graph graph = cdpkit::build_csr(cdpkit::make_rmat(14));
  const cdpkit::device_graph d_graph(graph);
  const std::uint32_t source = graph.highest_degree_vertex();
  cdpkit::bfs_options options;
  options.variant = cdpkit::bfs_variant::thresholded;
  cdpkit::launch_runtime& runtime = cdpkit::default_runtime();

  // 2. Trace it: the session turns tracing on and off, collect() copies the trace to the host.
  cdpkit::profiling::trace_session session(runtime);
  const auto levels = cdpkit::bfs(d_graph, source, options, runtime);
  const cdpkit::trace_snapshot trace = session.collect();

  // 3. Describe the run and write the profile (through a temporary file renamed into place).
  cdpkit::profiling::run_info run;
  run.algorithm = "bfs";
  run.variant = cdpkit::to_string(options.variant);
  run.input = "rmat:14";
  run.work = cdpkit::bfs_traversed_edges(graph, levels);
  run.work_unit = "edges";
  run.checked = true;
  run.verified = levels == cdpkit::bfs_reference(graph, source);
  cdpkit::profiling::profile_document profile("profile_run", cdpkit::profiling::device_json());
  profile.add_run(run, trace);
  profile.write(path);

  // 4. Check: the result is right, the trace's books balance, and the file holds the run.
  const auto summary = cdpkit::profiling::summarize(trace);
  std::printf("%s: %llu launch requests, %llu children launched, %llu done inline; wrote %s\n",
              run.variant.c_str(), static_cast<unsigned long long>(summary.launch_requests),
              static_cast<unsigned long long>(summary.child_launches),
              static_cast<unsigned long long>(summary.fallbacks), path.c_str());
  std::ifstream in(path);
  const auto written = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const bool ok = run.verified &&
                  summary.launch_requests == summary.child_launches + summary.fallbacks &&
                  written.is_object() && written["runs"].size() == 1;
  return ok ? 0 : 1;
}
