// The core's weak references to the optional parts' anchors (optional_parts.hpp): null where the
// program does not link the part.

#include "optional_parts.hpp"

extern "C" cdpkit::detail::spmv_yardstick_factory cdpkit_cusparse_part() __attribute__((weak));
extern "C" cdpkit::detail::font_reader cdpkit_fonts_part() __attribute__((weak));

namespace cdpkit::detail {

spmv_yardstick_factory linked_spmv_yardstick() noexcept {
  return cdpkit_cusparse_part != nullptr ? cdpkit_cusparse_part() : nullptr;
}

font_reader linked_font_reader() noexcept { return cdpkit_fonts_part != nullptr ? cdpkit_fonts_part() : nullptr; }

}  // namespace cdpkit::detail
