// The tree traversals' host engine (cdpkit/tree_traversal.hpp): the variants' and operations'
// names, device_tree, and tree_engine: its buffers, level_sync's level loop on the host, the
// launch of device_driver (with the host finishing what the device hands back), the recursions'
// root grid, and the results. The device code is cdpkit/tree/agents/ and cdpkit/tree/kernels.cuh.

#include <cdpkit/error.hpp>
#include <cdpkit/launch.cuh>
#include <cdpkit/launch/sites.hpp>
#include <cdpkit/loop_to_child.cuh>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/tree/kernels.cuh>
#include <cdpkit/tree_traversal.hpp>
#include <cdpkit/wait.hpp>

#include <algorithm>
#include <string>

namespace cdpkit {

namespace {

using tree_device::add_level_kernel;
using tree_device::add_level_threads;
using tree_device::counter_words;
using tree_device::driver_args;
using tree_device::driver_body;
using tree_device::driver_root_kernel;
using tree_device::generation_body;
using tree_device::group_kind;
using tree_device::init_kernel;
using tree_device::level_root_kernel;
using tree_device::level_segments;
using tree_device::level_visit_op;
using tree_device::no_pre_op;
using tree_device::node_group;
using tree_device::recursion_args;
using tree_device::recursion_root_kernel;
using tree_device::tree_out;
using tree_device::tree_view;

unsigned int blocks_for(std::uint64_t n, unsigned int threads) {
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

/// bottom_up from the host: levels `from` down to 1 (level k holds order[begins[k] .. begins[k+1]))
/// add their nodes into their parents, deepest first (stream order).
void add_levels_from_host(const tree_view& view, const tree_out& out, const std::uint32_t* order,
                          const std::vector<std::uint32_t>& begins, std::uint32_t from, cudaStream_t stream) {
  for (std::uint32_t level = from; level >= 1; --level) {
    const std::uint32_t b = begins[level], c = begins[level + 1] - b;
    add_level_kernel<<<blocks_for(c, add_level_threads), add_level_threads, 0, stream>>>(view, out, order + b, c);
    CDPKIT_CUDA_TRY(cudaGetLastError());
  }
}

/// level_sync: the host's level loop over `order` (the nodes by level), each level's children
/// expanded by flat_balanced; bottom_up then adds the levels into their parents, deepest first.
/// counters[0] / h_counter: the next level's size on the device and its pinned mirror.
tree_stats run_level_sync(const tree_view& view, const tree_out& out, std::uint32_t* order, std::uint32_t* counters,
                          std::uint32_t* h_counter, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE("tree::level_sync");
  level_root_kernel<<<1, 1, 0, stream>>>(order, view.root);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  loop_policy policy;
  policy.kind = loop_policy_kind::flat_balanced;
  std::vector<std::uint32_t> level_begin{0};
  std::uint32_t begin = 0, count = 1;
  while (count > 0) {
    CDPKIT_NVTX_SCOPE_PAYLOAD("tree::level", static_cast<std::uint32_t>(level_begin.size() - 1));
    CDPKIT_CUDA_TRY(cudaMemsetAsync(counters, 0, sizeof(std::uint32_t), stream));
    (void)loop_to_child::detail::enqueue_for_each_segment(
        level_segments{view.off, order + begin, count}, no_pre_op{},
        level_visit_op{view, out, order + begin + count, counters}, policy, runtime, stream,
        nullptr);
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counter, counters, sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                    stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "tree::level_sync level");
    begin += count;
    count = h_counter[0];
    level_begin.push_back(begin);
  }
  tree_stats stats;
  stats.levels = static_cast<std::uint32_t>(level_begin.size() - 1);
  if (out.bottom_up && stats.levels > 1) {
    CDPKIT_NVTX_SCOPE("tree::level_sync combine");
    add_levels_from_host(view, out, order, level_begin, stats.levels - 1, stream);
  }
  CDPKIT_WAIT_STREAM(stream, runtime, "tree::level_sync");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  return stats;
}

}  // namespace

// ---- names -------------------------------------------------------------------------------------

const char* to_string(tree_variant v) noexcept {
  switch (v) {
    case tree_variant::level_sync: return "level_sync";
    case tree_variant::recursive_naive: return "recursive_naive";
    case tree_variant::recursive_threshold: return "recursive_threshold";
    case tree_variant::recursive_warp: return "recursive_warp";
    case tree_variant::recursive_block: return "recursive_block";
    case tree_variant::device_driver: return "device_driver";
  }
  return "?";
}

const std::vector<tree_variant>& all_tree_variants() {
  static const std::vector<tree_variant> all = {tree_variant::level_sync,      tree_variant::recursive_naive,
                                                tree_variant::recursive_threshold, tree_variant::recursive_warp,
                                                tree_variant::recursive_block, tree_variant::device_driver};
  return all;
}

tree_variant parse_tree_variant(const std::string& name) {
  std::string choices;
  for (const tree_variant v : all_tree_variants()) {
    if (name == to_string(v)) return v;
    choices += (choices.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw input_error("unknown tree variant " + quoted_input(name) + " (expected one of " + choices + ")");
}

const char* to_string(tree_op op) noexcept { return op == tree_op::top_down ? "depth" : "subtree"; }

tree_op parse_tree_op(const std::string& name) {
  if (name == "depth" || name == "top_down") return tree_op::top_down;
  if (name == "subtree" || name == "bottom_up") return tree_op::bottom_up;
  throw input_error("unknown tree operation " + quoted_input(name) + " (expected depth or subtree)");
}

std::uint32_t default_tree_threshold(tree_variant v) noexcept {
  switch (v) {
    case tree_variant::recursive_naive: return 0;
    case tree_variant::recursive_threshold: return 16;
    case tree_variant::recursive_warp: return 64;
    case tree_variant::recursive_block: return 4;
    case tree_variant::device_driver: return 4096;
    default: return 0;
  }
}

std::uint32_t tree_options::effective_threshold() const noexcept {
  if (variant == tree_variant::recursive_naive || variant == tree_variant::level_sync) return 0;
  return threshold.value_or(default_tree_threshold(variant));
}

// ---- device_tree ----------------------------------------------------------------------------

device_tree::device_tree(const tree& t)
    : num_nodes_(t.num_nodes()),
      root_(t.root),
      root_first_child_(t.child_offsets.at(t.root)),
      root_children_(t.num_children(t.root)) {
  CDPKIT_NVTX_SCOPE("tree::upload");
  const std::uint64_t n = num_nodes_;
  require_device_memory(n * 24 + 64, "device_tree (" + std::to_string(n) + " nodes)");
  std::vector<std::uint32_t> slot(n, 0);
  for (std::uint32_t e = 0; e < t.children.size(); ++e) slot[t.children[e]] = e;
  const auto upload = [](auto& owner, const auto& host, std::size_t count) {
    using T = std::remove_reference_t<decltype(host[0])>;
    CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(owner), sizeof(T) * std::max<std::size_t>(count, 1)));
    if (count > 0) CDPKIT_CUDA_TRY(cudaMemcpy(owner.get(), host.data(), sizeof(T) * count, cudaMemcpyHostToDevice));
  };
  upload(d_offsets_, t.child_offsets, t.child_offsets.size());
  upload(d_children_, t.children, t.children.size());
  upload(d_parent_, t.parent, t.parent.size());
  upload(d_slot_, slot, slot.size());
  upload(d_value_, t.value, t.value.size());
}

// ---- tree_engine ----------------------------------------------------------------------------

tree_engine::tree_engine(const device_tree& t) : tree_(&t) {
  const std::uint64_t n = std::max<std::uint64_t>(1, t.num_nodes());
  // groups: a group takes 2 entries per owner, and its owners are the nodes with children of
  // the warp or block that asks (compacted); every node asks at most once: 2n + 2^16 is ample,
  // and a full pool would only turn launches into walks (counted)
  pool_entries_ = 2 * n + (1u << 16);
  require_device_memory(n * 28 + pool_entries_ * 4, "tree_engine (" + std::to_string(n) + " nodes)");
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_u32_a_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_u64_), sizeof(std::uint64_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_pending_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_order_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_pool_), sizeof(std::uint32_t) * pool_entries_));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_scan_), sizeof(std::uint32_t) * n));
  CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(d_counters_), sizeof(std::uint32_t) * counter_words));
  CDPKIT_CUDA_TRY(cudaMallocHost(detail::out_ptr(h_counters_), sizeof(std::uint32_t) * counter_words));
}

tree_stats tree_engine::run(const tree_options& options, launch_runtime& runtime, cudaStream_t stream) {
  CDPKIT_NVTX_SCOPE_PAYLOAD("tree::run", static_cast<std::uint32_t>(options.variant));
  detail::check_child_block_threads(options.child_block_threads, "tree_options::child_block_threads");
  const device_tree& t = *tree_;
  const tree_view view{t.d_child_offsets(), t.d_children(), t.d_parent(), t.d_slot(), t.d_value(),
                       t.num_nodes(), t.root()};
  const bool bottom_up = options.op == tree_op::bottom_up;
  const tree_out out{d_u32_a_.get(), reinterpret_cast<unsigned long long*>(d_u64_.get()), d_pending_.get(), bottom_up};
  last_op_ = options.op;
  ran_ = true;
  CDPKIT_CUDA_TRY(cudaMemsetAsync(d_counters_.get(), 0, sizeof(std::uint32_t) * counter_words, stream));
  init_kernel<<<blocks_for(t.num_nodes(), 256), 256, 0, stream>>>(view, out);
  CDPKIT_CUDA_TRY(cudaGetLastError());
  if (options.variant == tree_variant::level_sync)
    return run_level_sync(view, out, d_order_.get(), d_counters_.get(), h_counters_.get(), runtime, stream);

  tree_stats stats;
  if (options.variant == tree_variant::device_driver) {
    CDPKIT_NVTX_SCOPE("tree::device_driver");
    level_root_kernel<<<1, 1, 0, stream>>>(d_order_.get(), t.root());
    // the level begins take the pool's words (only the recursions use it as a pool): n + 1 at most
    const driver_args args{view,
                           out,
                           d_order_.get(),
                           d_counters_.get(),
                           d_scan_.get(),
                           d_pool_.get(),
                           options.effective_threshold(),
                           options.child_block_threads};
    driver_root_kernel<<<1, 32, 0, stream>>>(runtime.root_context(), driver_body{args, 0, 0, 1});
    CDPKIT_CUDA_TRY(cudaGetLastError());
    CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t) * counter_words,
                                    cudaMemcpyDeviceToHost, stream));
    CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver");
    CDPKIT_CHECK_DEVICE_ERRORS(runtime);
    stats.device_levels = h_counters_[2];
    stats.levels = stats.device_levels;
    const bool handed_back = h_counters_[3] != 0;
    const std::uint32_t add_from = h_counters_[7];  // bottom_up: the addition the device could not launch
    if (!handed_back && add_from == 0) return stats;
    // the level begins the device recorded: through the level to resume at, or all of them
    const std::uint32_t known = handed_back ? h_counters_[4] : stats.levels + 1;
    std::vector<std::uint32_t> begins(known);
    if (known > 0) {
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(begins.data(), d_pool_.get(), sizeof(std::uint32_t) * known,
                                      cudaMemcpyDeviceToHost, stream));
      CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver (level begins)");
    }
    if (handed_back) {
      // the device could not launch: the host finishes the levels, as level_sync would, with the
      // driver's own expansion (block_aggregated), then adds them all (bottom_up)
      stats.driver_handed_back = true;
      std::uint32_t level = h_counters_[4], begin = h_counters_[5];
      std::uint32_t count = h_counters_[3] == 1 ? h_counters_[6] : h_counters_[0];
      begins.push_back(begin);
      loop_policy policy;
      policy.kind = loop_policy_kind::block_aggregated;
      policy.threshold = options.effective_threshold();
      policy.launch_site = static_cast<std::uint16_t>(sites::tree_children);
      policy.child_block_threads = options.child_block_threads;
      while (count > 0) {
        CDPKIT_NVTX_SCOPE_PAYLOAD("tree::level", level);
        CDPKIT_CUDA_TRY(cudaMemsetAsync(d_counters_.get(), 0, sizeof(std::uint32_t), stream));
        (void)loop_to_child::detail::enqueue_for_each_segment(
            level_segments{view.off, d_order_.get() + begin, count}, no_pre_op{},
            level_visit_op{view, out, d_order_.get() + begin + count, d_counters_.get()}, policy, runtime, stream,
            nullptr);
        CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, stream));
        CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver (handed back)");
        begin += count;
        count = h_counters_[0];
        begins.push_back(begin);
        ++level;
      }
      stats.levels = level;
    }
    if (bottom_up && stats.levels > 1) {
      // the levels not yet added: all of them after a hand-back, else those from the refused one up
      stats.host_added_levels = handed_back ? stats.levels - 1 : add_from;
      CDPKIT_NVTX_SCOPE("tree::device_driver combine (on the host)");
      add_levels_from_host(view, out, d_order_.get(), begins, stats.host_added_levels, stream);
      CDPKIT_WAIT_STREAM(stream, runtime, "tree::device_driver combine (on the host)");
    }
    CDPKIT_CHECK_DEVICE_ERRORS(runtime);
    return stats;
  }

  // the recursions: the root's children as a one-owner group, launched from the host
  CDPKIT_NVTX_SCOPE("tree::recursion");
  const std::uint32_t len = t.root_children();
  if (len > 0) {
    const recursion_args args{view,
                              out,
                              options.effective_threshold(),
                              options.child_block_threads,
                              d_pool_.get(),
                              pool_entries_,
                              reinterpret_cast<unsigned long long*>(d_counters_.get() + 8),
                              reinterpret_cast<unsigned int*>(d_counters_.get() + 1)};
    const node_group root_group{nullptr, nullptr, 1, t.root_first_child(), len};
    const unsigned int grid = blocks_for(len, options.child_block_threads);
    const launch_context ctx = runtime.root_context();
    switch (options.variant) {
      case tree_variant::recursive_warp:
        recursion_root_kernel<group_kind::warp><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::warp>{args, root_group});
        break;
      case tree_variant::recursive_block:
        recursion_root_kernel<group_kind::block><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::block>{args, root_group});
        break;
      default:
        recursion_root_kernel<group_kind::per_node><<<grid, options.child_block_threads, 0, stream>>>(
            ctx, generation_body<group_kind::per_node>{args, root_group});
        break;
    }
    CDPKIT_CUDA_TRY(cudaGetLastError());
  }
  CDPKIT_CUDA_TRY(cudaMemcpyAsync(h_counters_.get(), d_counters_.get(), sizeof(std::uint32_t) * counter_words,
                                  cudaMemcpyDeviceToHost, stream));
  CDPKIT_WAIT_STREAM(stream, runtime, "tree::recursion");
  CDPKIT_CHECK_DEVICE_ERRORS(runtime);
  stats.pool_refusals = h_counters_[1];
  return stats;
}

tree_top_down tree_engine::top_down() const {
  tree_top_down r;
  if (!ran_ || last_op_ != tree_op::top_down) return r;
  const std::size_t n = tree_->num_nodes();
  wait_for_device("tree_engine::top_down", nullptr, __FILE__, __LINE__);
  r.depth.resize(n);
  r.path_sum.resize(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(r.depth.data(), d_u32_a_.get(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.path_sum.data(), d_u64_.get(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToHost));
  return r;
}

tree_bottom_up tree_engine::bottom_up() const {
  tree_bottom_up r;
  if (!ran_ || last_op_ != tree_op::bottom_up) return r;
  const std::size_t n = tree_->num_nodes();
  wait_for_device("tree_engine::bottom_up", nullptr, __FILE__, __LINE__);
  r.size.resize(n);
  r.sum.resize(n);
  CDPKIT_CUDA_TRY(cudaMemcpy(r.size.data(), d_u32_a_.get(), sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  CDPKIT_CUDA_TRY(cudaMemcpy(r.sum.data(), d_u64_.get(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToHost));
  return r;
}

tree_top_down tree_top_down_gpu(const device_tree& t, const tree_options& options, launch_runtime& runtime) {
  tree_engine engine(t);
  tree_options o = options;
  o.op = tree_op::top_down;
  (void)engine.run(o, runtime);
  return engine.top_down();
}

tree_bottom_up tree_bottom_up_gpu(const device_tree& t, const tree_options& options, launch_runtime& runtime) {
  tree_engine engine(t);
  tree_options o = options;
  o.op = tree_op::bottom_up;
  (void)engine.run(o, runtime);
  return engine.bottom_up();
}

}  // namespace cdpkit
