#pragma once
// reports/src/render/svg.hpp — the report's inline SVG charts (internal to the renderers): bar
// charts, log2 histograms with the underused band shaded, the launch-tree icicle, time series
// (child grids in flight, SM activity with the grids and kernels under it) and a gauge.
// They draw what they are given; the numbers come from the analysis.

#include <cdpkit/report/analysis.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit::report::render {

// Okabe-Ito colours: distinguishable with colour-vision deficiencies.
inline constexpr const char* blue = "#0072B2";
inline constexpr const char* vermillion = "#D55E00";
inline constexpr const char* orange = "#E69F00";
inline constexpr const char* green = "#009E73";
inline constexpr const char* grey = "#999999";

/// `s` with & < > " replaced by their HTML entities (for text and attribute values).
std::string esc(const std::string& s);

/// Decades the non-zero values of a bar chart may span before its y axis turns logarithmic: past
/// two, the smallest non-zero bar would be under 1% of the tallest, a pixel or less.
inline constexpr int log_scale_decades = 2;

/// A bar chart. Bars whose index is <= highlight_last lie in a shaded band labelled `band_label`
/// (none when highlight_last < 0): a flagged band is orange with its bars in the "underused"
/// colour, an informational one (band_flagged false) grey with its bars as the others. Labels on
/// both axes; every bar has a <title> with its exact value. Values spanning more than
/// log_scale_decades decades get a log10 y axis, and its title says "(log scale)"; the left
/// margin grows with the widest y label, so the axis title never overlaps the ticks.
/// Precondition: labels.size() == values.size() >= 1.
std::string bar_chart(const std::string& title, const std::vector<std::uint64_t>& values,
                      const std::vector<std::string>& labels, int highlight_last,
                      const std::string& x_label, const std::string& y_label,
                      const std::string& band_label, bool band_flagged = true);

/// A log2 histogram trimmed to its populated range (always including the band up to
/// `band_last`); a note instead of a chart when it is empty.
std::string log2_chart(const std::string& title, const std::array<std::uint64_t, log2_buckets>& h,
                       int band_last, const std::string& what, const std::string& band_label,
                       bool band_flagged = true);

/// The launch tree as an icicle: one row per depth, width = launches, colour = mean work.
std::string icicle(const launch_tree& tree);

/// A time series as a filled step area over [0, span_us]: one value per equal bin, a dashed
/// reference line at `reference` labelled `reference_label` (none when reference <= 0), the peak
/// and the time on the axes; every bin has a <title> with its time and value. Precondition:
/// values non-empty.
std::string timeline_chart(const std::string& title, const std::vector<double>& values, double span_us,
                           double reference, const std::string& reference_label,
                           const std::string& y_label);

/// The SM activity of a run over time (x: ms from its first sample): SM active % as an area,
/// warps active % as a line (both 0-100), and under them on the same axis the strips of its
/// child grids and its host-launched kernels (rows of bars, or the grids in flight when binned;
/// a strip without windows is left out).
std::string activity_chart(const sm_activity& activity);

/// A horizontal gauge of value / limit (full and vermillion at or over the limit).
std::string gauge(std::uint64_t value, std::uint64_t limit, const std::string& label);

}  // namespace cdpkit::report::render
