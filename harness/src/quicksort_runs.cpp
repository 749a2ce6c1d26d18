// The quicksort runs shared by the sample and the benchmark (cdpkit/harness/quicksort_runs.hpp).
// Plain C++ over the library's host API: the key types are dispatched to a template once, in
// sort_runner's constructor.

#include <cdpkit/harness/quicksort_runs.hpp>

#include <cdpkit/detail/unique_device_ptr.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/table.hpp>
#include <cdpkit/memory.hpp>
#include <cdpkit/nvtx.hpp>
#include <cdpkit/wait.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

namespace cdpkit::harness {

using harness::format;

namespace {

template <class T>
struct type_tag {
  using type = T;
};

/// f(type_tag<T>{}) for the C++ type of `t`.
template <class F>
decltype(auto) with_key_type(sort_key_type t, F&& f) {
  switch (t) {
    case sort_key_type::i32: return f(type_tag<std::int32_t>{});
    case sort_key_type::u32: return f(type_tag<std::uint32_t>{});
    case sort_key_type::i64: return f(type_tag<std::int64_t>{});
    case sort_key_type::u64: return f(type_tag<std::uint64_t>{});
    case sort_key_type::f32: return f(type_tag<float>{});
    case sort_key_type::f64: return f(type_tag<double>{});
  }
  throw input_error("unknown sort key type");
}

constexpr std::size_t value_bytes = sizeof(std::uint32_t);

std::string memory_what(sort_key_type type, std::uint64_t n, bool by_key) {
  return "quicksort of " + std::to_string(n) + " " + to_string(type) + " keys" +
         (by_key ? " with u32 values" : "") + " (keys, their input copy, scratch, reference)";
}

/// The largest scratch of `variants` and of the keys-only thrust_merge reference.
std::uint64_t scratch_for(sort_key_type type, std::uint64_t n, bool by_key,
                          const std::vector<quicksort_variant>& variants) {
  const std::size_t kb = key_bytes(type);
  std::uint64_t most = quicksort_scratch_bytes(quicksort_variant::thrust_merge, n, kb, 0);
  for (quicksort_variant v : variants)
    most = std::max<std::uint64_t>(most,
                                   quicksort_scratch_bytes(v, n, kb, by_key ? value_bytes : 0));
  return most;
}

template <class U>
detail::unique_device_ptr<U[]> device_alloc(std::uint64_t count) {
  detail::unique_device_ptr<U[]> p;
  if (count > 0) CDPKIT_CUDA_TRY(cudaMalloc(detail::out_ptr(p), count * sizeof(U)));
  return p;
}

/// The key's bits (floats compared bit for bit, not by value).
template <class T>
auto bits_of(T v) noexcept {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  bits b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

template <class T>
std::string key_text(T v) {
  if constexpr (std::is_floating_point_v<T>) return format("%.9g", static_cast<double>(v));
  else if constexpr (std::is_signed_v<T>) return std::to_string(static_cast<long long>(v));
  else return std::to_string(static_cast<unsigned long long>(v));
}

}  // namespace

std::size_t key_bytes(sort_key_type type) noexcept {
  switch (type) {
    case sort_key_type::i32:
    case sort_key_type::u32:
    case sort_key_type::f32: return 4;
    case sort_key_type::i64:
    case sort_key_type::u64:
    case sort_key_type::f64: return 8;
  }
  return 8;
}

std::string sort_input_label(sort_key_type type, sort_distribution dist, std::uint64_t n,
                             bool by_key) {
  std::string label = std::string(to_string(dist)) + ":" + std::to_string(n);
  if (type != sort_key_type::u32) label += std::string(":") + to_string(type);
  if (by_key) label += ":by_key";
  return label;
}

sort_case make_sort_case(sort_key_type type, sort_distribution dist, std::uint64_t n,
                         std::uint64_t seed, bool by_key) {
  if (n > quicksort_max_keys)
    throw input_error("a sort case of " + std::to_string(n) + " keys: at most " +
                      std::to_string(quicksort_max_keys) + " (quicksort_max_keys)");
  CDPKIT_NVTX_SCOPE("make_sort_case");
  sort_case c;
  c.input = sort_input_label(type, dist, n, by_key);
  c.type = type;
  c.dist = dist;
  c.n = n;
  c.seed = seed;
  c.by_key = by_key;
  with_key_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    c.keys = make_sort_input<T>(dist, n, seed);
  });
  return c;
}

std::uint64_t sort_device_bytes(sort_key_type type, std::uint64_t n, bool by_key,
                                const std::vector<quicksort_variant>& variants) {
  const std::uint64_t keys = saturating_mul(n, key_bytes(type));
  const std::uint64_t values = by_key ? saturating_mul(n, value_bytes) : 0;
  // keys + pristine input, values + pristine 0..n-1, scratch
  return saturating_add(saturating_add(saturating_mul(keys, 2), saturating_mul(values, 2)),
                        scratch_for(type, n, by_key, variants));
}

std::uint64_t sort_host_bytes(sort_key_type type, std::uint64_t n, bool by_key) {
  const std::uint64_t keys = saturating_mul(n, key_bytes(type));
  std::uint64_t bytes = saturating_mul(keys, 2);  // the reference, the copy of a run's output
  if (by_key)  // the values' copy, 0..n-1 on its way to the device, the permutation bitmap
    bytes = saturating_add(bytes, saturating_add(saturating_mul(n, 2 * value_bytes), n / 8 + 1));
  return bytes;
}

void require_sort_host_memory(sort_key_type type, std::uint64_t n, bool by_key) {
  if (n > quicksort_max_keys)
    throw input_error("quicksort of " + std::to_string(n) + " keys: at most " +
                      std::to_string(quicksort_max_keys) + " (quicksort_max_keys)");
  require_host_memory(sort_host_bytes(type, n, by_key), memory_what(type, n, by_key));
}

void require_sort_memory(sort_key_type type, std::uint64_t n, bool by_key,
                         const std::vector<quicksort_variant>& variants) {
  require_sort_host_memory(type, n, by_key);
  require_device_memory(sort_device_bytes(type, n, by_key, variants), memory_what(type, n, by_key));
}

// ---------------------------------------------------------------------------------------------

struct sort_runner::impl {
  virtual ~impl() = default;
  virtual quicksort_run run(quicksort_variant v, int reps, profiling::collector* collector) = 0;
  std::uint64_t defects = 0;
};

namespace {

template <class T>
class typed_runner final : public sort_runner::impl {
 public:
  typed_runner(const sort_case& c, launch_runtime& runtime,
               const std::vector<quicksort_variant>& variants)
      : c_(c), input_(std::get<std::vector<T>>(c.keys)), runtime_(runtime), n_(c.n) {
    if (input_.size() != n_)
      throw input_error("sort case " + c.input + ": " + std::to_string(input_.size()) +
                        " keys for n = " + std::to_string(n_));
    require_sort_memory(c.type, n_, c.by_key, variants);
    CDPKIT_NVTX_SCOPE("sort_runner: upload and reference");
    scratch_bytes_ = static_cast<std::size_t>(scratch_for(c.type, n_, c.by_key, variants));
    d_scratch_ = device_alloc<std::byte>(scratch_bytes_);
    d_keys_ = device_alloc<T>(n_);
    d_input_ = device_alloc<T>(n_);
    if (n_ > 0)
      CDPKIT_CUDA_TRY(cudaMemcpy(d_input_.get(), input_.data(), n_ * sizeof(T),
                                 cudaMemcpyHostToDevice));
    if (c.by_key) {
      d_values_ = device_alloc<std::uint32_t>(n_);
      d_iota_ = device_alloc<std::uint32_t>(n_);
      std::vector<std::uint32_t> iota(n_);
      for (std::uint64_t k = 0; k < n_; ++k) iota[k] = static_cast<std::uint32_t>(k);
      if (n_ > 0)
        CDPKIT_CUDA_TRY(cudaMemcpy(d_iota_.get(), iota.data(), n_ * value_bytes,
                                   cudaMemcpyHostToDevice));
      got_values_.resize(n_);
    }
    // The reference: the input sorted once by Thrust's merge sort (keys alone: the sorted keys
    // are what every variant must produce, by key or not).
    reference_.resize(n_);
    got_.resize(n_);
    if (n_ > 0) {
      CDPKIT_CUDA_TRY(cudaMemcpy(d_keys_.get(), d_input_.get(), n_ * sizeof(T),
                                 cudaMemcpyDeviceToDevice));
      quicksort_options o = options_for(quicksort_variant::thrust_merge);
      (void)quicksort<T>(d_keys_.get(), n_, less<T>{}, o);
      copy_back(reference_.data(), d_keys_.get(), n_ * sizeof(T), "sort_runner: the reference");
      for (std::uint64_t k = 1; k < n_; ++k) defects += less<T>{}(reference_[k], reference_[k - 1]);
    }
  }

  quicksort_run run(quicksort_variant v, int reps, profiling::collector* collector) override {
    const std::size_t need =
        quicksort_scratch_bytes(v, n_, sizeof(T), c_.by_key ? value_bytes : 0);
    if (need > scratch_bytes_)
      throw input_error(std::string("sort_runner: ") + to_string(v) + " needs " +
                        std::to_string(need) + " bytes of scratch, the runner holds " +
                        std::to_string(scratch_bytes_) + " (name it among its variants)");
    const quicksort_options o = options_for(v);
    quicksort_run out;
    out.variant = v;
    first_mismatch_.clear();
    auto enqueue = [&](cudaStream_t s) {
      if (c_.by_key)
        out.result = quicksort_by_key_async<T, std::uint32_t>(d_keys_.get(), d_values_.get(), n_,
                                                              less<T>{}, o, s);
      else
        out.result = quicksort_async<T>(d_keys_.get(), n_, less<T>{}, o, s);
    };
    auto prepare = [&](cudaStream_t s) {
      if (n_ == 0) return;
      CDPKIT_CUDA_TRY(cudaMemcpyAsync(d_keys_.get(), d_input_.get(), n_ * sizeof(T),
                                      cudaMemcpyDeviceToDevice, s));
      if (c_.by_key)
        CDPKIT_CUDA_TRY(cudaMemcpyAsync(d_values_.get(), d_iota_.get(), n_ * value_bytes,
                                        cudaMemcpyDeviceToDevice, s));
    };
    out.m = measure(runtime_, enqueue, prepare, [&] { return check(); }, reps, /*traced=*/true, nullptr,
                    collector, std::string("quicksort::") + to_string(v));
    out.first_mismatch = first_mismatch_;
    return out;
  }

 private:
  quicksort_options options_for(quicksort_variant v) const {
    quicksort_options o;
    o.variant = v;
    o.runtime = &runtime_;
    o.scratch = d_scratch_.get();
    o.scratch_bytes = d_scratch_ ? scratch_bytes_ : 0;
    return o;
  }

  void copy_back(void* host, const void* device, std::size_t bytes, const char* what) const {
    wait_for_device(what, &runtime_, __FILE__, __LINE__);
    if (bytes > 0) CDPKIT_CUDA_TRY(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  }

  void note(std::uint64_t k, const std::string& what) {
    if (first_mismatch_.empty()) first_mismatch_ = "position " + std::to_string(k) + ": " + what;
  }

  /// +0.0 and -0.0 are equivalent under less: either may come first among the zeros.
  static bool equivalent_zeros(T a, T b) noexcept {
    if constexpr (std::is_floating_point_v<T>) return a == T(0) && b == T(0);
    else return false;
  }

  /// Keys of got_ that differ from the reference (zeros by their sign counts).
  std::uint64_t key_mismatches() {
    if (std::memcmp(got_.data(), reference_.data(), n_ * sizeof(T)) == 0) return 0;
    std::uint64_t bad = 0;
    std::uint64_t neg_zero_got = 0, neg_zero_ref = 0;
    for (std::uint64_t k = 0; k < n_; ++k) {
      const T a = got_[k], b = reference_[k];
      if (equivalent_zeros(a, b)) {
        neg_zero_got += std::signbit(a) ? 1 : 0;
        neg_zero_ref += std::signbit(b) ? 1 : 0;
        continue;
      }
      if (bits_of(a) == bits_of(b)) continue;
      ++bad;
      note(k, "got " + key_text(a) + ", the reference has " + key_text(b));
    }
    if (neg_zero_got != neg_zero_ref) {
      bad += neg_zero_got > neg_zero_ref ? neg_zero_got - neg_zero_ref : neg_zero_ref - neg_zero_got;
      if (first_mismatch_.empty())
        first_mismatch_ = "the zeros: " + std::to_string(neg_zero_got) +
                          " keys -0.0 in the output, " + std::to_string(neg_zero_ref) +
                          " in the reference";
    }
    return bad;
  }

  /// By key: each value names the input position of its key, and the values are a permutation.
  /// The gathers are random accesses (seconds for 2^28 keys on one core), so the range is split
  /// over the host's threads; a bitmap of atomic words finds values seen twice.
  std::uint64_t value_mismatches() {
    const std::uint64_t words = n_ / 64 + 1;
    std::unique_ptr<std::atomic<std::uint64_t>[]> seen(new std::atomic<std::uint64_t>[words]());
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned parts = n_ < (std::uint64_t{1} << 20) ? 1u : std::min(hw, 32u);
    struct part_result {
      std::uint64_t bad = 0;
      std::uint64_t first = UINT64_MAX;  ///< the first wrong position of the part
      std::string what;
    };
    std::vector<part_result> results(parts);
    const auto check_part = [&](unsigned p) {
      part_result& r = results[p];
      const std::uint64_t lo = n_ * p / parts, hi = n_ * (p + 1) / parts;
      const auto wrong = [&](std::uint64_t k, auto&& text) {
        ++r.bad;
        if (r.first == UINT64_MAX) r.first = k, r.what = text();
      };
      for (std::uint64_t k = lo; k < hi; ++k) {
        const std::uint32_t v = got_values_[k];
        if (v >= n_) {
          wrong(k, [&] { return "value " + std::to_string(v) + " is not an input position"; });
          continue;
        }
        const std::uint64_t bit = std::uint64_t{1} << (v % 64);
        if (seen[v / 64].fetch_or(bit, std::memory_order_relaxed) & bit) {
          wrong(k, [&] { return "value " + std::to_string(v) + " appears twice"; });
          continue;
        }
        if (bits_of(got_[k]) != bits_of(input_[v]))
          wrong(k, [&] {
            return "key " + key_text(got_[k]) + " with value " + std::to_string(v) +
                   ", but input[" + std::to_string(v) + "] is " + key_text(input_[v]);
          });
      }
    };
    if (parts == 1) {
      check_part(0);
    } else {
      std::vector<std::thread> threads;
      threads.reserve(parts);
      for (unsigned p = 0; p < parts; ++p) {
        try {
          threads.emplace_back(check_part, p);
        } catch (const std::system_error&) {
          check_part(p);  // no thread to spare: this part here
        }
      }
      for (auto& t : threads) t.join();
    }
    std::uint64_t bad = 0;
    for (const auto& r : results) {
      bad += r.bad;
      if (r.bad > 0) note(r.first, r.what);  // parts in order: the first wrong position noted
    }
    return bad;
  }

  std::uint64_t check() {
    CDPKIT_NVTX_SCOPE("sort_runner: check");
    copy_back(got_.data(), d_keys_.get(), n_ * sizeof(T), "sort_runner: check");
    if (c_.by_key) copy_back(got_values_.data(), d_values_.get(), n_ * value_bytes, "sort_runner: check");
    std::uint64_t bad = defects + key_mismatches();
    if (c_.by_key) bad += value_mismatches();
    return bad;
  }

  const sort_case& c_;
  const std::vector<T>& input_;
  launch_runtime& runtime_;
  std::uint64_t n_;
  std::size_t scratch_bytes_ = 0;
  detail::unique_device_ptr<std::byte[]> d_scratch_;
  detail::unique_device_ptr<T[]> d_keys_, d_input_;
  detail::unique_device_ptr<std::uint32_t[]> d_values_, d_iota_;
  std::vector<T> reference_, got_;
  std::vector<std::uint32_t> got_values_;
  std::string first_mismatch_;
};

}  // namespace

sort_runner::sort_runner(const sort_case& c, launch_runtime& runtime,
                         const std::vector<quicksort_variant>& variants) {
  with_key_type(c.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    impl_ = std::make_unique<typed_runner<T>>(c, runtime, variants);
  });
}
sort_runner::~sort_runner() = default;
sort_runner::sort_runner(sort_runner&&) noexcept = default;
sort_runner& sort_runner::operator=(sort_runner&&) noexcept = default;

quicksort_run sort_runner::run(quicksort_variant v, int reps, profiling::collector* collector) {
  return impl_->run(v, reps, collector);
}

std::uint64_t sort_runner::reference_defects() const noexcept { return impl_->defects; }

std::vector<quicksort_run> run_quicksort_variants(const sort_case& c, launch_runtime& runtime,
                                                  const std::vector<quicksort_variant>& variants,
                                                  int reps, profiling::collector* collector) {
  sort_runner runner(c, runtime, variants);
  std::vector<quicksort_run> runs;
  for (quicksort_variant v : variants) runs.push_back(runner.run(v, reps, collector));
  return runs;
}

// ---------------------------------------------------------------------------------------------

namespace {
const quicksort_run* find(const std::vector<quicksort_run>& runs, quicksort_variant v) {
  for (const auto& r : runs)
    if (r.variant == v) return &r;
  return nullptr;
}
}  // namespace

void print_quicksort_results(std::ostream& out, const sort_case& c,
                             const std::vector<quicksort_run>& runs) {
  out << "\nquicksort on " << c.input << ": " << c.n << " " << to_string(c.type) << " keys"
      << (c.by_key ? " with u32 values" : "") << ", " << to_string(c.dist) << ", seed " << c.seed
      << ", ascending (cdpkit::less)\n";
  text_table table({"variant", "ms", "Mkeys/s", "vs thrust_radix", "vs thrust_merge",
                    "child launches", "tiny %", "max depth", "fallbacks", "warp eff", "check"});
  const quicksort_run* radix = find(runs, quicksort_variant::thrust_radix);
  const quicksort_run* merge = find(runs, quicksort_variant::thrust_merge);
  for (const auto& r : runs) {
    const auto& s = r.m.summary;
    const double ms = r.m.time.median_ms;
    const bool cdp = uses_cdp(r.variant);
    table.add_row({to_string(r.variant), format("%.3f", ms),
                   format("%.1f", ms > 0 ? static_cast<double>(c.n) / ms / 1e3 : 0.0),
                   ratio_text(radix ? radix->m.time.median_ms : 0, ms),
                   ratio_text(merge ? merge->m.time.median_ms : 0, ms),
                   std::to_string(s.child_launches),
                   s.child_launches > 0 ? format("%.1f", 100.0 * s.tiny_grid_share) : "-",
                   cdp ? std::to_string(s.max_depth) : "-", std::to_string(s.fallbacks),
                   s.warp_efficiency >= 0 ? format("%.3f", s.warp_efficiency) : "-",
                   check_text(r.m)});
  }
  table.print(out);
  out << "ms: median of the timed runs (tracing off), the whole call; Mkeys/s: n / ms. vs "
         "thrust_radix / vs thrust_merge: that yardstick's time / this variant's, same run (>1 = "
         "faster).\nchild launches, tiny % (child grids with < "
      << tiny_grid_work
      << " work items), max depth, fallbacks (refused launches: their ranges sorted without a child grid), warp eff "
         "(active lanes / 32 over the probed partition loops): one traced run.\ncheck: the "
         "output of the last timed run and of the traced run, key by key against the input "
         "sorted by thrust_merge"
      << (c.by_key ? "; each value the input position of its key, and a permutation" : "")
      << ".\n";
  for (const auto& r : runs) {
    if (r.variant == quicksort_variant::host_driven && r.result.host_levels > 0)
      out << "host_driven: " << r.result.host_levels << " levels driven from the host.\n";
    if (!r.first_mismatch.empty())
      out << to_string(r.variant) << ": first mismatch at " << r.first_mismatch << "\n";
  }
}

nlohmann::json quicksort_params(const sort_case& c, const quicksort_run& r) {
  nlohmann::json p = nlohmann::json::object();
  p["type"] = to_string(c.type);
  p["dist"] = to_string(c.dist);
  p["seed"] = c.seed;
  p["by_key"] = c.by_key;
  if (c.by_key) p["value_type"] = "u32";
  p["n"] = c.n;
  p["order"] = "less";
  p["scratch_bytes"] = r.result.scratch_bytes;
  p["scratch"] = "caller-provided, allocated once per input";
  if (r.variant == quicksort_variant::host_driven) p["host_levels"] = r.result.host_levels;
  return p;
}

bench_row to_bench_row(const sort_case& c, const quicksort_run& r) {
  bench_row row;
  row.family = "quicksort";
  row.input = c.input;
  row.variant = to_string(r.variant);
  row.baseline = to_string(quicksort_variant::thrust_merge);  // Thrust's comparison sort
  row.params = quicksort_params(c, r);
  row.n = c.n;
  row.work = c.n;
  row.work_unit = "keys";
  row.throughput_unit = "Gkeys/s";  // work / ms / 1e6
  row.m = r.m;
  return row;
}

}  // namespace cdpkit::harness
