#pragma once
// cdpkit/quicksort/tuning.hpp — the sizes that shape quicksort's recursion, and the plain records
// its device code shares with the host (task records live in the scratch; the host sizes them).
// Plain C++: included by the host code that sizes the scratch and by the device agents.

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CDPKIT_QS_HOST_DEVICE __host__ __device__
#else
#define CDPKIT_QS_HOST_DEVICE
#endif

namespace cdpkit::quicksort_detail {

/// Threads per block of the quicksort kernels, but for the device-launched partition passes
/// (child_pass_threads).
inline constexpr unsigned int block_threads = 256;
/// Threads per block of the partition passes (count, scatter) that fast launches from the
/// device: measured on an H200, a device-launched grid whose blocks use shared memory gets
/// about one resident block per SM whatever fits (docs/design.md, "Device-launched grids and
/// shared memory"), so its blocks are as large as a block can be. The host-launched passes
/// (fast's root count grid, host_driven) keep block_threads and several blocks per SM.
inline constexpr unsigned int child_pass_threads = 1024;
/// Keys per thread of the in-block tile sort (CUB block radix or merge sort in shared memory).
inline constexpr unsigned int tile_items_per_thread = 8;
/// Keys one block sorts in shared memory at once: a range this small is a leaf.
inline constexpr std::uint32_t tile_keys = block_threads * tile_items_per_thread;  // 2048
/// Ranges up to this size are sorted by ONE block (its own multi-way partition in shared
/// memory, then tile sorts): fast's "small" ranges, queued for its one drain grid.
inline constexpr std::uint32_t medium_keys = 16 * tile_keys;  // 32768
/// Keys each block of a partition grid classifies (fast, host_driven).
inline constexpr std::uint32_t grid_keys_per_block = 32768;
/// Keys of the splitter sample (sorted by one block: 256 threads x 4, or 1024 x 1).
inline constexpr unsigned int sample_items_per_thread = 4;
inline constexpr std::uint32_t sample_keys = block_threads * sample_items_per_thread;  // 1024
/// Most "between" buckets of one partition (a power of two): 127 splitters, 255 buckets with
/// the equal buckets (one per splitter).
inline constexpr unsigned int max_levels = 7;
inline constexpr unsigned int max_splitters = (1u << max_levels) - 1;  // 127
inline constexpr unsigned int max_buckets = 2 * max_splitters + 1;     // 255
/// Target size of a between-bucket: grid partitions aim at half a medium range, block
/// partitions at about 70 % of a tile (the sample's spread must rarely push a bucket past it),
/// so that nearly every bucket lands one tier down.
inline constexpr std::uint32_t grid_bucket_target = medium_keys / 2;
inline constexpr std::uint32_t block_bucket_target = tile_keys * 7 / 10;
/// Pending ranges one block's own recursion keeps in shared memory; past it, a range is
/// sorted by an in-place bitonic network in global memory (slow, never wrong).
inline constexpr unsigned int block_stack_entries = 256;
/// simple: ranges of at most this many keys are selection-sorted by their thread.
inline constexpr std::uint32_t simple_cutoff = 32;

/// Between-buckets for a range of `size` keys aiming at `target` keys per bucket:
/// ceil(size / target) clamped to [2, 2^max_levels].
CDPKIT_QS_HOST_DEVICE constexpr std::uint32_t partition_buckets(std::uint64_t size,
                                                                std::uint32_t target) {
  const std::uint64_t k = (size + target - 1) / target;
  return k < 2 ? 2u : (k > (1u << max_levels) ? (1u << max_levels) : static_cast<std::uint32_t>(k));
}

/// Levels of the search tree over k - 1 splitters: ceil(log2(k)) (the tree is padded with copies
/// of the last splitter up to 2^levels - 1 nodes; the padding's buckets stay empty).
CDPKIT_QS_HOST_DEVICE constexpr unsigned int tree_levels(std::uint32_t k) {
  unsigned int l = 1;
  while ((1u << l) < k) ++l;
  return l;
}

/// Blocks of a partition grid over `size` keys.
CDPKIT_QS_HOST_DEVICE constexpr std::uint32_t partition_grid(std::uint64_t size) {
  return static_cast<std::uint32_t>((size + grid_keys_per_block - 1) / grid_keys_per_block);
}

/// A range that fast partitions with a grid: where it is, its splitters, its bucket counts.
/// KeyStorage has the size and alignment of the key type.
template <class KeyStorage>
struct fast_task {
  std::uint32_t begin;        ///< first key of the range (index into the key arrays)
  std::uint32_t size;         ///< keys in the range
  std::uint32_t grid;         ///< blocks of its count and scatter grids
  std::uint32_t arena;        ///< first word of its per-block offsets: grid * buckets words
  std::uint32_t id;           ///< task number (seeds the sample)
  std::uint32_t count_done;   ///< count blocks finished (atomic)
  std::uint32_t scatter_done; ///< scatter blocks finished (atomic)
  std::uint8_t which;         ///< buffer holding the range: 0 = the caller's arrays, 1 = scratch
  std::uint8_t levels;        ///< levels of the splitter tree (2^levels - 1 splitters, padded)
  std::uint8_t pad_;
  std::uint16_t wanted;       ///< between-buckets asked of the sample (<= 2^levels)
  std::uint32_t count[max_buckets];     ///< keys per bucket (atomic)
  std::uint32_t start[max_buckets + 1]; ///< exclusive scan of count; start[buckets] = size
  KeyStorage sorted[max_splitters];     ///< the splitters, ascending
  KeyStorage tree[max_splitters + 1];   ///< the same in implicit search-tree order, [1..m]
};

/// radix: bits of one digit pass, and the buckets it sorts a range into (the partition passes'
/// bucket ids are bytes: 2^8 buckets at most).
inline constexpr unsigned int radix_digit_bits = 8;
inline constexpr unsigned int radix_buckets = 1u << radix_digit_bits;  // 256
static_assert(radix_buckets <= max_buckets + 1, "a radix bucket id fits the passes' byte");

/// radix: a bucket of at most this many keys is not given child grids (a count and a scatter
/// grid of a few blocks each, at about one resident block per SM) but goes to the drain, whose
/// block sorts it by its own digit passes; larger buckets get grids.
inline constexpr std::uint32_t radix_block_keys = 1u << 17;
static_assert(radix_block_keys >= medium_keys, "the drain takes at least the medium ranges");

/// The shift of the digit below the one at `shift` (digits go down in steps of radix_digit_bits;
/// the last one is the lowest radix_digit_bits bits, overlapping bits its range already shares).
CDPKIT_QS_HOST_DEVICE constexpr unsigned int next_digit_shift(unsigned int shift) {
  return shift >= radix_digit_bits ? shift - radix_digit_bits : 0u;
}

/// A range that radix sorts by one digit with a grid: where it is, the digit, its bucket counts.
/// Its keys share every bit above the digit (shift + radix_digit_bits). KeyStorage is the
/// unsigned integer of the key's order bits (cdpkit/quicksort/agents/radix_tile.cuh).
template <class KeyStorage>
struct radix_task {
  std::uint32_t begin;         ///< first key of the range (index into the key arrays)
  std::uint32_t size;          ///< keys in the range
  std::uint32_t grid;          ///< blocks of its count and scatter grids
  std::uint32_t arena;         ///< first word of its per-block offsets: grid * radix_buckets words
  std::uint32_t count_done;    ///< count blocks finished (atomic)
  std::uint32_t scatter_done;  ///< scatter blocks finished (atomic)
  std::uint8_t which;          ///< buffer holding the range: 0 = the caller's arrays, 1 = scratch
  std::uint8_t shift;          ///< the digit is bits [shift, shift + radix_digit_bits) of the order bits
  std::uint8_t pad_[6];
  /// OR over the range of (order bits of a key) ^ (order bits of its first key): the bits in
  /// which its keys differ (atomic; a count pass that finds every key in one bucket moves the
  /// digit down to the highest of them)
  KeyStorage differ;
  std::uint32_t count[radix_buckets];      ///< keys per bucket (atomic)
  std::uint32_t start[radix_buckets + 1];  ///< exclusive scan of count; start[radix_buckets] = size
};

/// A range that two_stream partitions with a grid (2-way, around `pivot`).
template <class KeyStorage>
struct two_stream_task {
  std::uint32_t begin;
  std::uint32_t size;
  std::uint32_t grid;
  std::uint32_t left;        ///< keys placed on the left so far (atomic)
  std::uint32_t right;       ///< keys placed on the right so far (atomic)
  std::uint32_t done;        ///< blocks finished (atomic)
  std::uint8_t which;        ///< buffer holding the range
  std::uint8_t or_equal;     ///< 1: left is x <= pivot (the pivot was the range's minimum)
  std::uint8_t pad_[6];
  KeyStorage pivot;
};

/// Counters at the head of the scratch's bookkeeping area.
struct scratch_counters {
  std::uint32_t tasks_used;   ///< task records taken from the pool (atomic)
  std::uint32_t arena_used;   ///< words taken from the offsets arena (atomic)
  std::uint32_t jobs_used;    ///< small-range jobs queued (atomic)
  std::uint32_t small_keys;   ///< keys in the queued jobs (atomic; the drain grid's work)
  std::uint32_t drain_next;   ///< fast: the next job a drain block takes (atomic)
  std::uint32_t pad_[59];
};

/// One small range for the drain grid: sorted by one block from buffer `which` into buffer 0,
/// or (copy) a run of equal keys moved home.
struct small_job {
  std::uint32_t begin;
  std::uint32_t size;
  /// buffer (bit 0), copy only (bit 1); radix: bits 8..15 hold the lowest bit its keys are known
  /// to share from up (their order bits agree on every bit from it; 0: none known)
  std::uint32_t which_copy;
};

/// radix: the job word for a range in buffer `which` whose keys agree on every order bit from
/// bit `shared_from` up.
CDPKIT_QS_HOST_DEVICE constexpr std::uint32_t radix_job_word(std::uint32_t which,
                                                             unsigned int shared_from) {
  return which | (shared_from << 8);
}

/// Where everything lies in the scratch (byte offsets, each 256-aligned).
struct scratch_layout {
  std::size_t keys = 0, values = 0, counters = 0, tasks = 0, arena = 0, jobs = 0, total = 0;
  std::uint32_t task_capacity = 0;
  std::uint32_t arena_capacity = 0;  ///< words
  std::uint32_t job_capacity = 0;    ///< small_job entries (fast: the whole sort; host_driven: a level)
  std::size_t task_bytes = 0;
};

}  // namespace cdpkit::quicksort_detail
