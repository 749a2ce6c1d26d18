// Reading the DWARF line table of a cubin (line_table.hpp). DWARF 2 to 4 line programs (nvcc
// writes version 2), 32-bit DWARF only; NVIDIA's extended opcode 0x90 (an inlined function's
// context: a nonzero first operand, then the offset of the function's name in .debug_str) marks
// the rows of inlined code.

#include "line_table.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

namespace cdpkit::children::detail {

namespace {

constexpr std::size_t max_rows = 1u << 22;  // rows read from one section at most
constexpr unsigned char nv_inline_context = 0x90;

/// A bounds-checked cursor over [begin, end) of the section.
class cursor {
 public:
  cursor(const unsigned char* data, std::size_t begin, std::size_t end) : data_(data), at_(begin), end_(end) {}
  bool ok() const { return ok_; }
  std::size_t at() const { return at_; }
  bool done() const { return !ok_ || at_ >= end_; }
  void seek(std::size_t to) {
    if (to > end_) ok_ = false;
    else at_ = to;
  }
  template <class T>
  T fixed() {
    T v{};
    if (!ok_ || end_ - at_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, data_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::uint64_t uleb() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (!ok_ || at_ >= end_ || shift > 63) {
        ok_ = false;
        return 0;
      }
      const unsigned char b = data_[at_++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
  }
  std::int64_t sleb() {
    std::int64_t v = 0;
    unsigned shift = 0;
    unsigned char b = 0;
    do {
      if (!ok_ || at_ >= end_ || shift > 63) {
        ok_ = false;
        return 0;
      }
      b = data_[at_++];
      v |= static_cast<std::int64_t>(static_cast<std::uint64_t>(b & 0x7f) << shift);
      shift += 7;
    } while ((b & 0x80) != 0);
    if (shift < 64 && (b & 0x40) != 0) v |= static_cast<std::int64_t>(~std::uint64_t{0} << shift);
    return v;
  }
  std::string text() {
    const auto* p = reinterpret_cast<const char*>(data_ + at_);
    const std::size_t n = ok_ && at_ < end_ ? strnlen(p, end_ - at_) : 0;
    if (!ok_ || at_ + n >= end_) {
      ok_ = false;
      return {};
    }
    at_ += n + 1;
    return std::string(p, n);
  }

 private:
  const unsigned char* data_;
  std::size_t at_, end_;
  bool ok_ = true;
};

bool is_runtime_wrapper(const std::string& name) {
  return name.find("cudaLaunchDevice") != std::string::npos || name.find("cudaGetParameterBuffer") != std::string::npos;
}

bool is_runtime_header(const std::string& path) {
  const std::string header = "cuda_device_runtime_api.h";
  return path.size() >= header.size() && path.compare(path.size() - header.size(), header.size(), header) == 0;
}

/// One line program (a unit): its header, then its sequences, rows appended to `table`.
void read_unit(cursor& c, std::size_t unit_end, const std::map<std::uint64_t, const line_relocation*>& relocations,
               const std::map<std::uint64_t, std::string>& inline_names, line_table& table, std::size_t& rows) {
  const std::uint16_t version = c.fixed<std::uint16_t>();
  const std::uint32_t header_length = c.fixed<std::uint32_t>();
  const std::size_t program = c.at() + header_length;
  if (!c.ok() || version < 2 || version > 4 || program > unit_end) {
    table.problem = "a line program of DWARF version " + std::to_string(version) + " or with a header past its end";
    return;
  }
  const auto min_length = c.fixed<std::uint8_t>();
  if (version >= 4) c.fixed<std::uint8_t>();  // maximum operations per instruction
  c.fixed<std::uint8_t>();                    // default is_stmt
  const auto line_base = c.fixed<std::int8_t>();
  const auto line_range = c.fixed<std::uint8_t>();
  const auto opcode_base = c.fixed<std::uint8_t>();
  std::vector<std::uint8_t> lengths(opcode_base > 0 ? opcode_base - 1 : 0);
  for (auto& n : lengths) n = c.fixed<std::uint8_t>();
  std::vector<std::string> directories{""};
  for (std::string d = c.text(); c.ok() && !d.empty(); d = c.text()) directories.push_back(d);
  const std::size_t first_file = table.files.size();  // this unit's file 1 is files[first_file]
  for (std::string f = c.text(); c.ok() && !f.empty(); f = c.text()) {
    const std::uint64_t dir = c.uleb();
    c.uleb();  // modification time
    c.uleb();  // length
    const bool absolute = !f.empty() && f[0] == '/';
    table.files.push_back(absolute || dir == 0 || dir >= directories.size() ? f : directories[dir] + "/" + f);
  }
  if (!c.ok() || line_range == 0) {
    table.problem = "a line program's header is cut short";
    return;
  }
  c.seek(program);

  // the state machine
  std::uint64_t address = 0;
  std::uint64_t file = 1, line = 1;
  bool in_runtime = false;
  std::vector<line_row>* rows_of = nullptr;  // the sequence's function's rows; null: not known
  const auto emit = [&] {
    if (rows_of == nullptr || rows >= max_rows) return;
    const std::size_t index = first_file + static_cast<std::size_t>(file) - 1;
    line_row r;
    r.offset = address;
    r.file = file >= 1 && index < table.files.size() ? static_cast<std::uint32_t>(index) : 0;
    r.line = line <= UINT32_MAX ? static_cast<std::uint32_t>(line) : 0;  // past 2^32 (or below 1): no line
    r.runtime_inline = in_runtime || (r.file != 0 && is_runtime_header(table.files[r.file]));
    rows_of->push_back(r);
    ++rows;
  };
  while (!c.done() && c.at() < unit_end) {
    const auto op = c.fixed<std::uint8_t>();
    if (op >= opcode_base) {  // special opcode: advance both, emit a row
      const unsigned adjusted = op - opcode_base;
      address += static_cast<std::uint64_t>(adjusted / line_range) * min_length;
      line += static_cast<std::int64_t>(line_base) + adjusted % line_range;
      emit();
      continue;
    }
    switch (op) {
      case 0: {  // extended opcode
        const std::uint64_t length = c.uleb();
        const std::size_t start = c.at();
        if (!c.ok() || length == 0 || length > unit_end - start) {
          table.problem = "an extended line opcode runs past its program";
          return;
        }
        const auto sub = c.fixed<std::uint8_t>();
        if (sub == 1) {  // end of sequence
          emit();
          address = 0, file = 1, line = 1, in_runtime = false, rows_of = nullptr;
        } else if (sub == 2 && length == 9) {  // set address: a relocation names the function
          const std::size_t operand = c.at();
          c.fixed<std::uint64_t>();  // RELA: the bytes in place do not count, the addend does
          address = 0;
          rows_of = nullptr;
          if (const auto r = relocations.find(operand); r != relocations.end()) {
            address = static_cast<std::uint64_t>(r->second->addend);
            rows_of = &table.functions[r->second->function];
          }
        } else if (sub == nv_inline_context) {
          const std::uint64_t context = c.uleb();
          const std::uint64_t name = c.at() < start + length ? c.uleb() : 0;
          const auto n = inline_names.find(name);
          in_runtime = context != 0 && n != inline_names.end() && is_runtime_wrapper(n->second);
        }
        c.seek(start + length);
        break;
      }
      case 1: emit(); break;                                                    // copy
      case 2: address += c.uleb() * min_length; break;                          // advance pc
      case 3: line += c.sleb(); break;                                          // advance line
      case 4: file = c.uleb(); break;                                           // set file
      case 8: address += static_cast<std::uint64_t>((255 - opcode_base) / line_range) * min_length; break;  // const add pc
      case 9: address += c.fixed<std::uint16_t>(); break;                       // fixed advance pc
      default:                                                                  // operands we need not read
        for (unsigned k = 0; k < (op - 1u < lengths.size() ? lengths[op - 1] : 0u); ++k) c.uleb();
        break;
    }
  }
  if (!c.ok()) table.problem = "a line program is cut short";
}

}  // namespace

line_table read_line_table(const unsigned char* section, std::size_t size, const std::vector<line_relocation>& relocations,
                           const std::map<std::uint64_t, std::string>& inline_names) {
  line_table table;
  table.files.push_back("");
  std::map<std::uint64_t, const line_relocation*> by_offset;
  for (const auto& r : relocations) by_offset[r.offset] = &r;
  std::size_t rows = 0;
  std::size_t at = 0;
  while (section != nullptr && at < size && table.problem.empty()) {
    cursor c(section, at, size);
    const std::uint32_t length = c.fixed<std::uint32_t>();
    if (!c.ok() || length == 0xffffffffu || length > size - c.at()) {
      table.problem = length == 0xffffffffu ? "64-bit DWARF line programs are not read" : "a line program runs past the section";
      break;
    }
    const std::size_t unit_end = c.at() + length;
    cursor unit(section, c.at(), unit_end);
    read_unit(unit, unit_end, by_offset, inline_names, table, rows);
    at = unit_end;
  }
  if (rows >= max_rows && table.problem.empty()) table.problem = "more than " + std::to_string(max_rows) + " line rows";
  return table;
}

bool source_line(const line_table& table, const std::string& function, std::uint64_t offset, std::string& file,
                 std::uint32_t& line) {
  const auto f = table.functions.find(function);
  if (f == table.functions.end()) return false;
  const line_row* best = nullptr;
  for (const line_row& r : f->second)  // program order: a later row at the same offset wins
    if (r.offset <= offset && !r.runtime_inline && r.file != 0 && r.line != 0 && (best == nullptr || r.offset >= best->offset))
      best = &r;
  if (best == nullptr) return false;
  file = table.files[best->file];
  line = best->line;
  return true;
}

}  // namespace cdpkit::children::detail
