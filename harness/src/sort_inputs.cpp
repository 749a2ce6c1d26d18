// The quicksort workloads, host side: distribution and key type names, and the deterministic key
// generators (cdpkit/harness/sort_inputs.hpp).
//
// 1. Determinism. The keys are made in chunks of 2^16; chunk c draws from its own splitmix64
//    stream, seeded from (seed, distribution, c). The output depends on (d, n, seed) only, never
//    on the number of threads or on the standard library (no std::*_distribution: their output
//    differs between implementations).
// 2. Speed. Chunks are filled by up to 16 threads; every distribution is O(1) per key except
//    zipf (table lookups that stay in cache, see zipf_sampler), so that the benchmark's
//    2^28 keys take seconds.
// 3. Values. Every type is seen through an "ordered" unsigned index u (0 = the smallest key):
//    integers in offset binary (flip the sign bit), floats over the finite values without -0.0
//    (so that distinct indices are distinct under <). Structured distributions (sorted, reverse,
//    organ_pipe, sawtooth, staircase, median3_killer) place their ranks evenly over that index
//    range: rank r of m is index ((2r + 1) * span) / (2m). They do not depend on the seed.
//    Random keys (uniform) are uniform over the integer range; for floats a random sign, a
//    uniform exponent of the normal range and a random mantissa (finite, no NaN, no infinity,
//    magnitudes from 2^-126 (2^-1022) to the largest finite value).

#include <cdpkit/detail/enum_names.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/harness/sort_inputs.hpp>
#include <cdpkit/memory.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace cdpkit::harness {

namespace {

constexpr sort_distribution distributions[] = {
    sort_distribution::uniform,        sort_distribution::sorted,
    sort_distribution::reverse,        sort_distribution::all_equal,
    sort_distribution::two_values,     sort_distribution::sixteen_values,
    sort_distribution::organ_pipe,     sort_distribution::sawtooth,
    sort_distribution::staircase,      sort_distribution::zipf,
    sort_distribution::gaussian,       sort_distribution::pivot_copies,
    sort_distribution::median3_killer, sort_distribution::shared_prefix,
    sort_distribution::powers_of_two,  sort_distribution::one_different,
    sort_distribution::alternating_extremes,
};

constexpr sort_key_type key_types[] = {sort_key_type::i32, sort_key_type::u32, sort_key_type::i64,
                                       sort_key_type::u64, sort_key_type::f32, sort_key_type::f64};

// Long names accepted by parse_sort_key_type, in the order of key_types.
constexpr const char* key_type_long_names[] = {"int32", "uint32", "int64", "uint64", "float",
                                               "double"};

// ---------------------------------------------------------------------------------------------
// Random numbers

/// splitmix64's finalizer: a bijection of 64-bit words that mixes every bit into every other.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// splitmix64 (Steele, Lea, Flood 2014): one add and a finalizer per 64-bit draw.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept { return mix64(state += 0x9e3779b97f4a7c15ull); }
  /// Uniform in [0, 1) with 53 random bits.
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, bound) for bound <= 2^32 (multiply-shift; the bias is below 2^-32).
  std::uint32_t below(std::uint32_t bound) noexcept {
    return static_cast<std::uint32_t>(((next() >> 32) * bound) >> 32);
  }
};

// ---------------------------------------------------------------------------------------------
// Keys seen through their ordered index (see the header comment, part 3)

template <class T>
struct key_traits;

template <class T>
struct integer_key_traits {
  using U = std::make_unsigned_t<T>;
  static constexpr int bits = 8 * sizeof(T);
  /// Largest ordered index.
  static constexpr std::uint64_t max_index = std::numeric_limits<U>::max();
  /// The middle of the range: 0 for the signed types, 2^(bits-1) for the unsigned ones.
  static constexpr std::uint64_t middle_index = std::uint64_t{1} << (bits - 1);
  static T from_index(std::uint64_t u) noexcept {
    U v = static_cast<U>(u);
    if constexpr (std::is_signed_v<T>) v ^= static_cast<U>(U{1} << (bits - 1));
    T out;
    std::memcpy(&out, &v, sizeof out);
    return out;
  }
  static T random(splitmix64& rng) noexcept { return from_index(rng.next()); }
  /// 2^k, k uniform in [0, bits - 2] (positive in every integer type).
  static T power_of_two(splitmix64& rng) noexcept {
    return static_cast<T>(T{1} << rng.below(static_cast<std::uint32_t>(bits - 1)));
  }
};

template <>
struct key_traits<std::int32_t> : integer_key_traits<std::int32_t> {};
template <>
struct key_traits<std::uint32_t> : integer_key_traits<std::uint32_t> {};
template <>
struct key_traits<std::int64_t> : integer_key_traits<std::int64_t> {};
template <>
struct key_traits<std::uint64_t> : integer_key_traits<std::uint64_t> {};

/// Floats: index u in [0, 2F - 1) where F counts the finite non-negative values (bit patterns
/// 0 .. F - 1); u = F - 1 is +0.0, below it the negatives (-0.0 left out), above the positives.
template <class T, class Bits, int Mantissa, int ExponentMax>
struct float_key_traits {
  static constexpr Bits sign = Bits{1} << (8 * sizeof(T) - 1);
  static constexpr std::uint64_t finite_non_negative = std::uint64_t{ExponentMax + 1} << Mantissa;
  static constexpr std::uint64_t max_index = 2 * finite_non_negative - 2;
  /// +0.0
  static constexpr std::uint64_t middle_index = finite_non_negative - 1;
  static T from_index(std::uint64_t u) noexcept {
    const std::uint64_t zero = finite_non_negative - 1;
    const Bits b = u >= zero ? static_cast<Bits>(u - zero) : static_cast<Bits>(sign | (zero - u));
    T out;
    std::memcpy(&out, &b, sizeof out);
    return out;
  }
  /// A random sign, a uniform exponent field in [1, ExponentMax] (normal numbers) and a random
  /// mantissa: finite values of both signs over the whole range of magnitudes.
  static T random(splitmix64& rng) noexcept {
    const std::uint64_t r = rng.next();
    const Bits mantissa = static_cast<Bits>(r & ((std::uint64_t{1} << Mantissa) - 1));
    const Bits s = (r >> 63) != 0 ? sign : Bits{0};
    const Bits exponent = static_cast<Bits>(1 + rng.below(ExponentMax));
    const Bits b = static_cast<Bits>(s | static_cast<Bits>(exponent << Mantissa) | mantissa);
    T out;
    std::memcpy(&out, &b, sizeof out);
    return out;
  }
  /// +-2^e with a random sign and a uniform exponent field in [1, ExponentMax]: every normal
  /// power of two, a zero mantissa.
  static T power_of_two(splitmix64& rng) noexcept {
    const Bits s = (rng.next() >> 63) != 0 ? sign : Bits{0};
    const Bits exponent = static_cast<Bits>(1 + rng.below(ExponentMax));
    const Bits b = static_cast<Bits>(s | static_cast<Bits>(exponent << Mantissa));
    T out;
    std::memcpy(&out, &b, sizeof out);
    return out;
  }
};

template <>
struct key_traits<float> : float_key_traits<float, std::uint32_t, 23, 254> {};
template <>
struct key_traits<double> : float_key_traits<double, std::uint64_t, 52, 2046> {};

__extension__ typedef unsigned __int128 uint128;

/// Rank r of m (r < m) spread evenly over the ordered indices: the middle of the r-th of m equal
/// cells. Strictly increasing in r while m <= max_index + 1.
template <class T>
T rank_key(std::uint64_t r, std::uint64_t m) noexcept {
  const uint128 span = uint128{key_traits<T>::max_index} + 1;
  const uint128 u = ((2 * uint128{r} + 1) * span) / (2 * uint128{m});
  return key_traits<T>::from_index(static_cast<std::uint64_t>(u));
}

/// `count` distinct random keys (count is small).
template <class T>
std::vector<T> distinct_random_keys(std::size_t count, splitmix64& rng) {
  std::vector<T> keys;
  while (keys.size() < count) {
    const T k = key_traits<T>::random(rng);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------
// Zipf

constexpr std::uint32_t zipf_ranks = 1u << 20;
constexpr double zipf_exponent = 1.1;

/// Sampling of Zipf(s = 1.1) over zipf_ranks ranks from tables that stay in cache (under 300 KiB),
/// in O(1) per key:
/// - the head, ranks 1 .. 2^12 (77% of the mass), exactly: rank k has weight k^-s;
/// - the tail, ranks past 2^12, from the continuous law (rank k has the mass of x^-s over
///   [k - 1/2, k + 1/2]; relative error below 1e-7 there): 2^14 buckets of equal mass between
///   the quantiles of its inverse CDF, a key placed linearly inside its bucket and rounded to the
///   nearest rank.
/// One alias table (Walker, built by Vose's method) over the 2^12 head ranks and the 2^14 tail
/// buckets picks the outcome with one random word: an index and a coin.
class zipf_sampler {
 public:
  static constexpr std::uint32_t head = 1u << 12;
  static constexpr std::uint32_t tail_buckets = 1u << 14;
  static constexpr std::uint32_t outcomes = head + tail_buckets;

  zipf_sampler() : threshold_(outcomes), alias_(outcomes), tail_x_(tail_buckets + 1) {
    std::vector<double> weight(outcomes);
    double head_mass = 0.0;
    for (std::uint32_t k = 0; k < head; ++k) head_mass += weight[k] = std::pow(k + 1.0, -zipf_exponent);
    const double e = 1.0 - zipf_exponent;  // < 0
    const double a_e = std::pow(head + 0.5, e);
    const double tail_mass = (std::pow(zipf_ranks + 0.5, e) - a_e) / e;
    for (std::uint32_t b = 0; b < tail_buckets; ++b) weight[head + b] = tail_mass / tail_buckets;
    // tail_x_[b]: the x at which the tail's CDF is b / tail_buckets
    for (std::uint32_t b = 0; b <= tail_buckets; ++b)
      tail_x_[b] = std::pow(a_e + tail_mass * b / tail_buckets * e, 1.0 / e);
    tail_x_.back() = zipf_ranks + 0.5;
    // Vose: scale to mean 1, pair each under-full outcome with an over-full one
    const double total = head_mass + tail_mass;
    std::vector<std::uint32_t> small, large;
    for (std::uint32_t i = 0; i < outcomes; ++i) {
      weight[i] *= outcomes / total;
      (weight[i] < 1.0 ? small : large).push_back(i);
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      threshold_[s] = to_threshold(weight[s]);
      alias_[s] = l;
      weight[l] -= 1.0 - weight[s];
      if (weight[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (const auto i : small) threshold_[i] = 0xffffffffu, alias_[i] = i;  // rounding leftovers
    for (const auto i : large) threshold_[i] = 0xffffffffu, alias_[i] = i;
  }

  /// A 0-based rank (0 = the most frequent).
  [[nodiscard]] std::uint32_t rank(splitmix64& rng) const noexcept {
    const std::uint64_t r = rng.next();
    const auto i = static_cast<std::uint32_t>(((r >> 32) * outcomes) >> 32);
    const std::uint32_t o = static_cast<std::uint32_t>(r) < threshold_[i] ? i : alias_[i];
    if (o < head) return o;
    const std::uint32_t b = o - head;
    const double x = tail_x_[b] + rng.unit() * (tail_x_[b + 1] - tail_x_[b]);
    const double k = std::clamp(std::floor(x + 0.5), head + 1.0, double{zipf_ranks});
    return static_cast<std::uint32_t>(k) - 1;
  }

 private:
  static std::uint32_t to_threshold(double p) noexcept {
    return static_cast<std::uint32_t>(std::min(p * 0x1.0p32, 4294967295.0));
  }
  std::vector<std::uint32_t> threshold_;  ///< keep outcome i when the coin is below this
  std::vector<std::uint32_t> alias_;      ///< ... else take this one
  std::vector<double> tail_x_;
};

// ---------------------------------------------------------------------------------------------
// Chunked, threaded filling

constexpr std::uint64_t chunk_keys = 1u << 16;

/// Run fill(begin, end, rng) over [0, n) in chunks of chunk_keys, chunk c with its own stream;
/// the chunks are shared out to up to 16 threads in contiguous runs.
template <class Fill>
void fill_chunks(std::uint64_t n, std::uint64_t stream_seed, const Fill& fill) {
  const std::uint64_t chunks = (n + chunk_keys - 1) / chunk_keys;
  const auto run = [&](std::uint64_t c_begin, std::uint64_t c_end) {
    for (std::uint64_t c = c_begin; c < c_end; ++c) {
      splitmix64 rng{mix64(stream_seed ^ mix64(c + 1))};
      fill(c * chunk_keys, std::min(n, (c + 1) * chunk_keys), rng);
    }
  };
  const std::uint64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t workers = std::min<std::uint64_t>({hw, 16, (chunks + 3) / 4});
  if (workers <= 1) {
    run(0, chunks);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  const auto share = [&](std::uint64_t w) { return chunks * w / workers; };
  for (std::uint64_t w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(run, share(w), share(w + 1));
    } catch (const std::system_error&) {
      run(share(w), share(w + 1));  // no thread to be had: do that share here
    }
  }
  run(0, share(1));
  for (auto& t : threads) t.join();
}


/// A normal deviate N(0, 1) into key space: integers around the middle of their range with
/// sigma = range / 16, rounded and clamped; floats as they are.
template <class T>
T gaussian_key(double z) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(z);
  } else {
    constexpr int bits = 8 * sizeof(T);
    const double middle = std::ldexp(1.0, bits - 1);
    // the largest double below 2^bits converts to the unsigned type without overflow
    const double top = std::nextafter(std::ldexp(1.0, bits), 0.0);
    const double x = std::clamp(std::floor(middle + z * std::ldexp(1.0, bits - 4) + 0.5), 0.0, top);
    return key_traits<T>::from_index(static_cast<std::uint64_t>(x));
  }
}

template <class T>
void fill_keys(std::vector<T>& out, sort_distribution d, std::uint64_t seed) {
  const std::uint64_t n = out.size();
  T* keys = out.data();
  const std::uint64_t stream = mix64(seed) ^ mix64(0x5eedull + static_cast<std::uint64_t>(d));
  splitmix64 setup{mix64(stream ^ 0xa5a5a5a5a5a5a5a5ull)};  // values shared by every chunk
  switch (d) {
    case sort_distribution::uniform:
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; ++i) keys[i] = key_traits<T>::random(rng);
      });
      break;
    case sort_distribution::sorted:
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = rank_key<T>(i, n);
      });
      break;
    case sort_distribution::reverse:
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = rank_key<T>(n - 1 - i, n);
      });
      break;
    case sort_distribution::all_equal:
      std::fill(out.begin(), out.end(), key_traits<T>::random(setup));
      break;
    case sort_distribution::two_values:
    case sort_distribution::sixteen_values: {
      const std::size_t count = d == sort_distribution::two_values ? 2 : 16;
      const auto values = distinct_random_keys<T>(count, setup);
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; ++i) keys[i] = values[rng.below(static_cast<std::uint32_t>(count))];
      });
      break;
    }
    case sort_distribution::organ_pipe: {
      const std::uint64_t half = (n + 1) / 2;  // ranks 0 .. half - 1 up, then down again
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = rank_key<T>(std::min(i, n - 1 - i), half);
      });
      break;
    }
    case sort_distribution::sawtooth:
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = rank_key<T>(i % 1024, 1024);
      });
      break;
    case sort_distribution::staircase: {
      const std::uint64_t steps = (n + 31) / 32;
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = rank_key<T>(i / 32, steps);
      });
      break;
    }
    case sort_distribution::zipf: {
      // rank r (0 = the most frequent) -> one of 2^20 distinct keys spread over the range, in an
      // order scrambled per seed (r * odd ^ salt is a bijection of 20-bit words)
      const zipf_sampler sampler;
      const std::uint64_t odd = setup.next() | 1u;
      const std::uint64_t salt = setup.next();
      constexpr std::uint64_t mask = zipf_ranks - 1;
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; ++i) {
          const std::uint64_t r = sampler.rank(rng);
          keys[i] = rank_key<T>(((r * odd) ^ salt) & mask, zipf_ranks);
        }
      });
      break;
    }
    case sort_distribution::gaussian:
      // Marsaglia's polar method: two deviates per accepted pair (chunks have even lengths)
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; i += 2) {
          double u, v, s;
          do {
            u = 2.0 * rng.unit() - 1.0;
            v = 2.0 * rng.unit() - 1.0;
            s = u * u + v * v;
          } while (s >= 1.0 || s == 0.0);
          const double f = std::sqrt(-2.0 * std::log(s) / s);
          keys[i] = gaussian_key<T>(u * f);
          if (i + 1 < e) keys[i + 1] = gaussian_key<T>(v * f);
        }
      });
      break;
    case sort_distribution::pivot_copies: {
      // In every aligned block of 64 keys exactly half (the last block: half rounded up) are the
      // median of the uniform distribution (the middle of the range; +0.0 for floats), at random
      // places; the others are uniform. So at least n / 2 copies in all.
      const T median = key_traits<T>::from_index(key_traits<T>::middle_index);
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto block = b; block < e; block += 64) {
          const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(64, e - block));
          const std::uint32_t copies = (len + 1) / 2;
          std::uint64_t mask = copies == 64 ? ~0ull : (1ull << copies) - 1;
          for (std::uint32_t k = len - 1; k > 0; --k) {  // Fisher-Yates over the mask's bits
            const std::uint32_t j = rng.below(k + 1);
            const std::uint64_t differ = ((mask >> k) ^ (mask >> j)) & 1u;
            mask ^= (differ << k) | (differ << j);
          }
          for (std::uint32_t k = 0; k < len; ++k) {
            const T other = key_traits<T>::random(rng);
            keys[block + k] = (mask >> k) & 1u ? median : other;
          }
        }
      });
      break;
    }
    case sort_distribution::shared_prefix: {
      // one random window of 4096 ordered indices, aligned to 4096 and inside the type's range
      constexpr std::uint64_t window = 4096;
      const std::uint64_t windows = (key_traits<T>::max_index + 1 - window) / window + 1;
      const std::uint64_t base = (setup.next() % windows) * window;
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; ++i) keys[i] = key_traits<T>::from_index(base + rng.below(window));
      });
      break;
    }
    case sort_distribution::powers_of_two:
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64& rng) {
        for (auto i = b; i < e; ++i) keys[i] = key_traits<T>::power_of_two(rng);
      });
      break;
    case sort_distribution::one_different: {
      const auto values = distinct_random_keys<T>(2, setup);
      std::fill(out.begin(), out.end(), values[0]);
      if (n > 0) keys[setup.next() % n] = values[1];
      break;
    }
    case sort_distribution::alternating_extremes: {
      const T low = key_traits<T>::from_index(0), high = key_traits<T>::from_index(key_traits<T>::max_index);
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) keys[i] = i % 2 == 0 ? low : high;
      });
      break;
    }
    case sort_distribution::median3_killer: {
      // Musser's sequence ("Introspective Sorting and Selection Algorithms", 1997) for m = 2k
      // keys, k even: 1, k+1, 3, k+3, ..., k-1, 2k-1, then 2, 4, ..., 2k (ranks 1-based). The
      // median of first, middle and last is then always the second smallest key of the range.
      // It is a permutation only for k even, so m is n rounded down to a multiple of 4; the last
      // n - m keys are the ranks m+1 .. n in order. Rank r becomes the key of `sorted` at r - 1.
      const std::uint64_t m = n - n % 4;
      const std::uint64_t k = m / 2;
      fill_chunks(n, stream, [&](std::uint64_t b, std::uint64_t e, splitmix64&) {
        for (auto i = b; i < e; ++i) {
          std::uint64_t rank;  // 1-based
          if (i < k) rank = i % 2 == 0 ? i + 1 : k + i;
          else if (i < m) rank = 2 * (i - k + 1);
          else rank = i + 1;
          keys[i] = rank_key<T>(rank - 1, n);
        }
      });
      break;
    }
  }
}

}  // namespace

const char* to_string(sort_distribution d) noexcept {
  switch (d) {
    case sort_distribution::uniform: return "uniform";
    case sort_distribution::sorted: return "sorted";
    case sort_distribution::reverse: return "reverse";
    case sort_distribution::all_equal: return "all_equal";
    case sort_distribution::two_values: return "two_values";
    case sort_distribution::sixteen_values: return "sixteen_values";
    case sort_distribution::organ_pipe: return "organ_pipe";
    case sort_distribution::sawtooth: return "sawtooth";
    case sort_distribution::staircase: return "staircase";
    case sort_distribution::zipf: return "zipf";
    case sort_distribution::gaussian: return "gaussian";
    case sort_distribution::pivot_copies: return "pivot_copies";
    case sort_distribution::median3_killer: return "median3_killer";
    case sort_distribution::shared_prefix: return "shared_prefix";
    case sort_distribution::powers_of_two: return "powers_of_two";
    case sort_distribution::one_different: return "one_different";
    case sort_distribution::alternating_extremes: return "alternating_extremes";
  }
  return "unknown";
}

sort_distribution parse_sort_distribution(const std::string& name) {
  return cdpkit::detail::parse_enum_name(name, "sort distribution", distributions);
}

const std::vector<sort_distribution>& all_sort_distributions() {
  static const std::vector<sort_distribution> all(std::begin(distributions),
                                                  std::end(distributions));
  return all;
}

const char* to_string(sort_key_type t) noexcept {
  switch (t) {
    case sort_key_type::i32: return "i32";
    case sort_key_type::u32: return "u32";
    case sort_key_type::i64: return "i64";
    case sort_key_type::u64: return "u64";
    case sort_key_type::f32: return "f32";
    case sort_key_type::f64: return "f64";
  }
  return "unknown";
}

sort_key_type parse_sort_key_type(const std::string& name) {
  std::string choices;
  for (std::size_t k = 0; k < std::size(key_types); ++k) {
    if (name == to_string(key_types[k]) || name == key_type_long_names[k]) return key_types[k];
    choices += choices.empty() ? "" : ", ";
    choices += to_string(key_types[k]);
  }
  std::string aliases;
  for (const char* a : key_type_long_names) {
    aliases += aliases.empty() ? "" : ", ";
    aliases += a;
  }
  throw input_error("unknown sort key type " + cdpkit::quoted_input(name) + " (choose one of: " + choices +
                    "; or " + aliases + ")");
}

const std::vector<sort_key_type>& all_sort_key_types() {
  static const std::vector<sort_key_type> all(std::begin(key_types), std::end(key_types));
  return all;
}

template <class T>
std::vector<T> make_sort_input(sort_distribution d, std::uint64_t n, std::uint64_t seed) {
  const std::string what = std::string("make_sort_input: ") + std::to_string(n) + " " +
                           to_string(sort_key_type_of<T>()) + " keys (" + to_string(d) + ")";
  require_host_memory(saturating_mul(n, sizeof(T)), what);
  if (n > std::vector<T>().max_size())
    throw input_error(what + ": more keys than a std::vector can hold");
  std::vector<T> keys(n);
  fill_keys(keys, d, seed);
  return keys;
}

template std::vector<std::int32_t> make_sort_input<std::int32_t>(sort_distribution, std::uint64_t,
                                                                 std::uint64_t);
template std::vector<std::uint32_t> make_sort_input<std::uint32_t>(sort_distribution,
                                                                   std::uint64_t, std::uint64_t);
template std::vector<std::int64_t> make_sort_input<std::int64_t>(sort_distribution, std::uint64_t,
                                                                 std::uint64_t);
template std::vector<std::uint64_t> make_sort_input<std::uint64_t>(sort_distribution,
                                                                   std::uint64_t, std::uint64_t);
template std::vector<float> make_sort_input<float>(sort_distribution, std::uint64_t, std::uint64_t);
template std::vector<double> make_sort_input<double>(sort_distribution, std::uint64_t,
                                                     std::uint64_t);

}  // namespace cdpkit::harness
