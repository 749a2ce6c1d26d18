// The font reader of the Bézier family: every glyph outline of a font, through FreeType, as
// quadratic and cubic curves. The cdpkit::fonts part (built where CMake finds FreeType): linked, it
// hands read_font to the core (common/optional_parts.hpp), whose read_font_curves and font: specs
// refuse font inputs otherwise.
//
// 1. The file is read whole under the readers' size cap (a regular file only) and opened from
//    memory (FT_New_Memory_Face, face 0).
// 2. Each glyph is loaded unscaled (FT_LOAD_NO_SCALE: font units, no hinting), and its outline
//    decomposed (FT_Outline_Decompose): move_to opens a contour, line_to / conic_to / cubic_to
//    each add one curve, FreeType closes every contour with a segment back to its start.
// 3. Font units become pixels (pixels per em / units per em), y down, the glyph moved to its
//    cell of the grid: one transform of the integer coordinates, so the end of a curve and the
//    start of the next are the same float.

#include <cdpkit/bezier.hpp>
#include <cdpkit/error.hpp>
#include <cdpkit/nvtx.hpp>

#include "../common/optional_parts.hpp"
#include "../common/text_input.hpp"

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_OUTLINE_H

#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace cdpkit {

namespace {

std::string freetype_error(FT_Error error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned>(error));
#if (FREETYPE_MAJOR * 100 + FREETYPE_MINOR) >= 210
  if (const char* text = FT_Error_String(error)) return std::string(text) + " (FreeType error " + code + ")";
#endif
  return std::string("FreeType error ") + code;
}

struct library_deleter {
  void operator()(FT_Library lib) const noexcept { FT_Done_FreeType(lib); }
};
struct face_deleter {
  void operator()(FT_Face face) const noexcept { FT_Done_Face(face); }
};

/// What the decomposition callbacks build: the curves of one glyph, appended to the set.
struct outline_builder {
  curve_set* set;
  double scale, origin_x, baseline_y;  // pixels per font unit; the glyph's origin, in pixels
  FT_Vector current{};
  std::exception_ptr failure;

  vec2 at(const FT_Vector& v) const {
    return {static_cast<float>(origin_x + scale * static_cast<double>(v.x)),
            static_cast<float>(baseline_y - scale * static_cast<double>(v.y))};
  }
  /// Ends the open contour (if it has curves).
  void close_contour() {
    const auto n = static_cast<std::uint32_t>(set->curves.size());
    if (n != set->contour_offsets.back()) set->contour_offsets.push_back(n);
  }
  int add(std::uint8_t degree, const FT_Vector* p1, const FT_Vector* p2, const FT_Vector& to) noexcept {
    try {
      if (set->curves.size() >= max_bezier_curves)
        throw input_error("more than the " + std::to_string(max_bezier_curves) + " curves a set may have");
      bezier_curve c{};
      c.degree = degree;
      c.p[0] = at(current);
      if (p1 == nullptr) {  // a line: a quadratic with its control point at the midpoint
        c.p[1] = {static_cast<float>(origin_x + scale * 0.5 * (static_cast<double>(current.x) + static_cast<double>(to.x))),
                  static_cast<float>(baseline_y -
                                     scale * 0.5 * (static_cast<double>(current.y) + static_cast<double>(to.y)))};
      } else {
        c.p[1] = at(*p1);
      }
      c.p[2] = degree == 3 ? at(*p2) : at(to);
      c.p[3] = at(to);
      set->curves.push_back(c);
      current = to;
      return 0;
    } catch (...) {
      failure = std::current_exception();
      return 1;
    }
  }

  static outline_builder& of(void* user) { return *static_cast<outline_builder*>(user); }
  static int move_to(const FT_Vector* to, void* user) {
    outline_builder& b = of(user);
    try {
      b.close_contour();
    } catch (...) {
      b.failure = std::current_exception();
      return 1;
    }
    b.current = *to;
    return 0;
  }
  static int line_to(const FT_Vector* to, void* user) {
    outline_builder& b = of(user);
    if (to->x == b.current.x && to->y == b.current.y) return 0;  // zero length (the closing line of a closed path)
    return b.add(2, nullptr, nullptr, *to);
  }
  static int conic_to(const FT_Vector* control, const FT_Vector* to, void* user) {
    return of(user).add(2, control, nullptr, *to);
  }
  static int cubic_to(const FT_Vector* c1, const FT_Vector* c2, const FT_Vector* to, void* user) {
    return of(user).add(3, c1, c2, *to);
  }
};

curve_set read_font(const std::string& path, std::uint32_t pixels) {
  CDPKIT_NVTX_SCOPE("bezier::read_font_curves");
  if (pixels < 1 || pixels > 16384)
    throw input_error(path + ": the pixel size " + std::to_string(pixels) + " is not in [1, 16384]");
  // 1. the file, whole, under the readers' cap; FreeType reads it from memory
  const std::string data = detail::read_text_file(path, detail::default_max_file_bytes(), true,
                                                  {"font", "read_font_curves has no option to raise it"});
  FT_Library raw_lib = nullptr;
  if (const FT_Error e = FT_Init_FreeType(&raw_lib))
    throw input_error(path + ": FreeType could not start: " + freetype_error(e));
  const std::unique_ptr<FT_LibraryRec_, library_deleter> lib(raw_lib);
  FT_Face raw_face = nullptr;
  if (const FT_Error e = FT_New_Memory_Face(lib.get(), reinterpret_cast<const FT_Byte*>(data.data()),
                                            static_cast<FT_Long>(data.size()), 0, &raw_face))
    throw input_error(path + ": not a font FreeType can read: " + freetype_error(e));
  const std::unique_ptr<FT_FaceRec_, face_deleter> face(raw_face);
  if (!FT_IS_SCALABLE(face.get()) || face->units_per_EM == 0)
    throw input_error(path + ": the font has no outlines (a bitmap-only font)");

  // 2. the grid: cells 1.25 em wide and a line high, the baseline at the ascender
  const auto glyphs = static_cast<std::uint32_t>(face->num_glyphs);
  const double scale = static_cast<double>(pixels) / face->units_per_EM;
  double line = scale * (static_cast<double>(face->ascender) - static_cast<double>(face->descender));
  double ascender = scale * static_cast<double>(face->ascender);
  if (!(line > 0.0)) {  // a face without vertical metrics
    line = 1.25 * pixels;
    ascender = pixels;
  }
  const double cell_w = 1.25 * pixels, cell_h = line + 0.15 * pixels;
  const auto columns = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(glyphs))));

  curve_set set;
  set.contour_offsets.push_back(0);
  FT_Outline_Funcs funcs{};
  funcs.move_to = &outline_builder::move_to;
  funcs.line_to = &outline_builder::line_to;
  funcs.conic_to = &outline_builder::conic_to;
  funcs.cubic_to = &outline_builder::cubic_to;
  std::uint32_t outlined = 0, failed = 0;
  for (std::uint32_t g = 0; g < glyphs; ++g) {
    if (FT_Load_Glyph(face.get(), g, FT_LOAD_NO_SCALE) != 0) {
      ++failed;
      continue;
    }
    const FT_GlyphSlot slot = face->glyph;
    if (slot->format != FT_GLYPH_FORMAT_OUTLINE || slot->outline.n_contours <= 0) continue;
    // 3. the glyph in its cell
    outline_builder b{&set, scale, (g % columns) * cell_w + 0.125 * pixels,
                      (g / columns) * cell_h + ascender + 0.075 * pixels, FT_Vector{}, nullptr};
    const std::size_t before = set.curves.size();
    const FT_Error e = FT_Outline_Decompose(&slot->outline, &funcs, &b);
    if (b.failure) std::rethrow_exception(b.failure);
    if (e != 0) {  // a broken outline: the glyph is dropped, as one that does not load
      set.curves.resize(before);
      while (set.contour_offsets.back() > before) set.contour_offsets.pop_back();
      ++failed;
      continue;
    }
    b.close_contour();
    if (set.curves.size() > before) ++outlined;
  }
  if (set.curves.empty()) throw input_error(path + ": no glyph of the font has an outline");
  std::string family = face->family_name ? face->family_name : "?";
  if (face->style_name) family += std::string(" ") + face->style_name;
  set.name = "font:" + path + " (" + family + ", " + std::to_string(outlined) + " of " + std::to_string(glyphs) +
             " glyphs with outlines" + (failed ? ", " + std::to_string(failed) + " unreadable" : std::string()) +
             ", " + std::to_string(pixels) + " px per em)";
  return set;
}

}  // namespace
}  // namespace cdpkit

/// The part's anchor (optional_parts.hpp), named by the cdpkit::fonts target in --undefined.
extern "C" cdpkit::detail::font_reader cdpkit_fonts_part() { return &cdpkit::read_font; }
