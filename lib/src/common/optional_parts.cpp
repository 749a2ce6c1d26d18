// Where the optional parts (optional_parts.hpp) register: constant-initialized atomics, so a part's
// static initializer may run before or after this file's, in any order.

#include "optional_parts.hpp"

#include <atomic>

namespace cdpkit::detail {

namespace {
std::atomic<spmv_yardstick_factory> spmv_yardstick_slot{nullptr};
std::atomic<font_reader> font_reader_slot{nullptr};
}  // namespace

void register_spmv_yardstick(spmv_yardstick_factory factory) noexcept { spmv_yardstick_slot.store(factory); }
spmv_yardstick_factory registered_spmv_yardstick() noexcept { return spmv_yardstick_slot.load(); }

void register_font_reader(font_reader reader) noexcept { font_reader_slot.store(reader); }
font_reader registered_font_reader() noexcept { return font_reader_slot.load(); }

}  // namespace cdpkit::detail
