#pragma once
// The source lines of a cubin's code: the DWARF line table nvcc writes for `-lineinfo` or `-G`
// (section .debug_line of a device-linked cubin; each sequence is one function, its start address
// a relocation naming the function and its addresses offsets into the function's SASS). Read by
// read_cubin (cubin.hpp) to give each device launch call its source file and line.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cdpkit::children::detail {

/// One row of a function's line table: from `offset` on, the code comes from `file`:`line`.
struct line_row {
  std::uint64_t offset = 0;
  std::uint32_t file = 0;     ///< index into line_table::files (0: none)
  std::uint32_t line = 0;
  bool runtime_inline = false;  ///< inside an inlined wrapper of the device runtime (cudaLaunchDeviceV2, ...)
};

/// The rows of every function that has line information, by function (symbol) name.
struct line_table {
  std::vector<std::string> files;                           ///< file paths; files[0] is ""
  std::map<std::string, std::vector<line_row>> functions;  ///< rows in program order
  std::string problem;                                      ///< what could not be read; empty: all
};

/// A relocation in .debug_line: the function whose address the 8 bytes at `offset` take.
struct line_relocation {
  std::uint64_t offset = 0;
  std::string function;
  std::int64_t addend = 0;
};

/// Read the line programs in `section` (the bytes of .debug_line). Bounds-checked throughout: a
/// corrupt section gives the rows read before the fault and says why in `problem`.
line_table read_line_table(const unsigned char* section, std::size_t size, const std::vector<line_relocation>& relocations,
                           const std::map<std::uint64_t, std::string>& inline_names);

/// The source line of the instruction at `offset` in `function`: the last row at or before it
/// that is not inside an inlined device-runtime wrapper (the user's line that launches, not the
/// line of cuda_device_runtime_api.h the wrapper was inlined from). False where none.
bool source_line(const line_table& table, const std::string& function, std::uint64_t offset, std::string& file,
                 std::uint32_t& line);

}  // namespace cdpkit::children::detail
